import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { browserSignInPaths } from '../modules/sso/openapi.ts';
import { PROTOCOL_SECURITY_SCHEMES, protocolPaths } from '../oauth/openapi.ts';
import { HEALTH_PATHS } from './health.ts';
import { appRouter, procedureMeta } from '../router.ts';
import type { Meta } from './trpc.ts';

type Json = Record<string, unknown>;

const ERROR_ENVELOPE = {
  type: 'object',
  required: ['error', 'meta'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable code clients branch on (BAD_REQUEST, INVALID_TOKEN, …)' },
        message: { type: 'string', description: 'For people; do not parse' },
        details: {
          type: 'array',
          items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
    meta: { type: 'object', required: ['request_id'], properties: { request_id: { type: 'string' } } },
  },
};

/** The spelling each path has in the spec (trailing slashes included), keyed by the adapter's form. */
function exactPaths(): Map<string, string> {
  const map = new Map<string, string>();
  for (const meta of procedureMeta.values()) {
    const path = meta.openapi?.path;
    if (path) map.set(path.replace(/\/+$/, '') || '/', path);
  }
  return map;
}

function isPageSchema(schema: Json | undefined): boolean {
  const props = schema?.properties as Json | undefined;
  return !!props && Object.keys(props).length === 2 && 'data' in props && 'meta' in props;
}

/** Success bodies are `{data: …}` on the wire (lists are already `{data, meta}`); errors are the envelope. */
function envelopeResponses(operation: Json): void {
  const responses = operation.responses as Record<string, Json> | undefined;
  if (!responses) return;
  for (const [status, response] of Object.entries(responses)) {
    const media = (response.content as Record<string, Json> | undefined)?.['application/json'];
    if (!media) continue;
    if (status.startsWith('2')) {
      const schema = media.schema as Json | undefined;
      if (!isPageSchema(schema)) media.schema = { type: 'object', required: ['data'], properties: { data: schema ?? {} } };
    } else {
      media.schema = ERROR_ENVELOPE;
    }
  }
}

const TENANT_HEADER = {
  name: 'X-Tenant-ID',
  in: 'header',
  required: false,
  description: 'The workspace id (wsp_…); without it, the workspace of the credential sent (an API key or access token)',
  schema: { type: 'string' },
};

/**
 * What the generator cannot know from the procedure: a public call needs no credential (`protect`
 * unset), a public call about one workspace names it in X-Tenant-ID, a create answers 201, and a PUT
 * that may create answers 201 or 200.
 */
function fromMeta(operation: Json, meta: Meta): void {
  if (!meta.openapi?.protect) operation.security = [];
  if (meta.tenantHeader) {
    operation.parameters = [TENANT_HEADER, ...((operation.parameters as Json[] | undefined) ?? [])];
    // No credential needed; one may name the workspace instead of the header.
    operation.security = [{}, { Authorization: [] }];
  }
  const responses = operation.responses as Record<string, Json> | undefined;
  if (meta.successStatus === 201 && responses?.['200']) {
    const { '200': created, ...rest } = responses;
    operation.responses = { '201': { ...created, description: 'Created' }, ...rest };
  }
  if (meta.createsOnPut && responses?.['200']) {
    const { '200': replaced, ...rest } = responses;
    operation.responses = { '200': { ...replaced, description: 'Replaced' }, '201': { ...replaced, description: 'Created' }, ...rest };
  }
}

/** The meta of each operation, by its method and path as the generator writes them. */
function metaByOperation(): Map<string, Meta> {
  const map = new Map<string, Meta>();
  for (const meta of procedureMeta.values()) {
    const { method, path } = meta.openapi ?? {};
    if (method && path) map.set(`${method.toLowerCase()} ${path.replace(/\/+$/, '') || '/'}`, meta);
  }
  return map;
}

/** The OpenAPI 3.1 document of the REST door, with the spec's exact paths and the envelope. */
export function buildOpenApiDocument(baseUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Identity service API',
    description:
      'Multi-tenant identity and access service. Every response is an envelope: `{"data": …}` (lists add `meta`) or ' +
      '`{"error": {"code", "message"}, "meta": {"request_id"}}`, and carries `X-Request-ID`.',
    version: '1.0.0',
    openApiVersion: '3.1.0',
    baseUrl,
    securitySchemes: {
      Authorization: { type: 'http', scheme: 'bearer', description: 'A secret API key (sk_…) or a user access token' },
    },
  });
  const exact = exactPaths();
  const metas = metaByOperation();
  const paths: Record<string, Json> = {};
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      envelopeResponses(operation as Json);
      const meta = metas.get(`${method} ${path.replace(/\/+$/, '') || '/'}`);
      if (meta) fromMeta(operation as Json, meta);
    }
    paths[exact.get(path) ?? path] = item;
  }
  Object.assign(paths, protocolPaths(), browserSignInPaths(), HEALTH_PATHS);
  const components = { ...doc.components, securitySchemes: { ...doc.components?.securitySchemes, ...PROTOCOL_SECURITY_SCHEMES } };
  return { ...doc, paths, components } as OpenAPIObject;
}
