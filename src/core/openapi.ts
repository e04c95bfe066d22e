import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { browserSignInPaths } from '../modules/sso/openapi.ts';
import { OAUTH_ERROR, PROTOCOL_SECURITY_SCHEMES, protocolPaths } from '../oauth/openapi.ts';
import { HEALTH_PATHS } from './health.ts';
import { PROTOCOL_PATH } from './http.ts';
import { appRouter, procedureMeta } from '../router.ts';
import type { Meta } from './trpc.ts';

type Json = Record<string, unknown>;

/** The envelope of every error the REST door answers: described once, referenced by each answer. */
const ERROR_REF = { $ref: '#/components/schemas/Error' };

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
      media.schema = ERROR_REF;
    }
  }
}

const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Seconds until a call is let through again', schema: { type: 'integer' } },
  'RateLimit-Limit': { description: 'Calls allowed in the window', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Calls left in the window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window starts again', schema: { type: 'integer' } },
};

/** An error answer in the envelope. */
function envelopeError(description: string): Json {
  return { description, content: { 'application/json': { schema: ERROR_REF } } };
}

const BODY_METHODS = new Set(['post', 'put', 'patch']);

/** Follows a `$ref` into the document's component schemas. */
function resolveRef(schema: unknown, schemas: Record<string, unknown>): unknown {
  const ref = (schema as Json | undefined)?.$ref;
  return typeof ref === 'string' ? schemas[ref.slice(ref.lastIndexOf('/') + 1)] : schema;
}

/** Whether a body schema has a member that names a resource by its id (`role_id`, `scope.id`), at any depth. */
function namesAnId(schema: unknown, schemas: Record<string, unknown>, seen = new Set<unknown>()): boolean {
  const resolved = resolveRef(schema, schemas) as Json | undefined;
  if (!resolved || typeof resolved !== 'object' || seen.has(resolved)) return false;
  seen.add(resolved);
  const members = (resolved.properties ?? {}) as Record<string, unknown>;
  if (Object.keys(members).some((name) => name === 'id' || name.endsWith('_id'))) return true;
  const nested = [
    ...Object.values(members),
    resolved.items,
    ...['oneOf', 'anyOf', 'allOf'].flatMap((k) => (resolved[k] as unknown[]) ?? []),
  ];
  return nested.some((inner) => namesAnId(inner, schemas, seen));
}

/** Why a call can answer 404, or nothing when it cannot: it names something that may not exist. */
function notFoundReason(operation: Json, meta: Meta, path: string, schemas: Record<string, unknown>): string | undefined {
  if (meta.notFound === false) return undefined;
  const parameters = (operation.parameters as { in: string }[] | undefined) ?? [];
  if (parameters.some((p) => p.in === 'path')) return 'NOT_FOUND: the id in the path names nothing in the workspace';
  const content = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  if (namesAnId(content?.['application/json']?.schema, schemas)) return 'NOT_FOUND: an id in the body names nothing in the workspace';
  if (meta.tenantHeader) return 'NOT_FOUND: no workspace has the id sent in X-Tenant-ID';
  if (path.startsWith('/platform/')) return 'NOT_FOUND: the platform API is off (PLATFORM_API_TOKEN is unset)';
  return undefined;
}

/**
 * The error answers the generator cannot know, decided here for every procedure at once: 404 where
 * the call names something that may not exist (the generator's own guess, every GET and none of the
 * POSTs, is replaced), 409 where the procedure says when it conflicts (`meta.conflict`), and 413 on
 * every call with a body (over 1 MiB). 429, which every call can answer, is added with the others.
 */
function errorAnswers(operation: Json, meta: Meta, method: string, path: string, schemas: Record<string, unknown>): void {
  const responses = { ...(operation.responses as Record<string, Json>) };
  delete responses['404'];
  const notFound = notFoundReason(operation, meta, path, schemas);
  if (notFound) responses['404'] = envelopeError(notFound);
  if (meta.conflict) responses['409'] = envelopeError(`CONFLICT: ${meta.conflict}`);
  if (BODY_METHODS.has(method)) responses['413'] = envelopeError('BAD_REQUEST: the body is larger than 1 MiB');
  operation.responses = responses;
}

/**
 * The answers every call can give. The spec's 1,000 calls per minute per IP apply to every call but
 * the health probes; the OAuth and discovery endpoints answer it in RFC 6749's error body, the rest in
 * the envelope (core/http.ts). An envelope call answers 503 `UNAVAILABLE` with `Retry-After` while the
 * database cannot be reached, or when a write's transaction is still aborted for a deadlock or a
 * serialization failure once run again (core/error-normalize.ts).
 */
function everyCallAnswers(paths: Record<string, Json>): void {
  for (const [path, item] of Object.entries(paths)) {
    if (Object.hasOwn(HEALTH_PATHS, path)) continue;
    const protocol = PROTOCOL_PATH.test(path);
    for (const operation of Object.values(item) as Json[]) {
      const responses = operation.responses as Record<string, Json>;
      responses['429'] = {
        description: 'RATE_LIMITED: too many requests (the limit of every call per IP, or the call’s own)',
        headers: RATE_LIMIT_HEADERS,
        content: { 'application/json': { schema: protocol ? OAUTH_ERROR : ERROR_REF } },
      };
      if (!protocol && !responses['503']) {
        responses['503'] = {
          description:
            'UNAVAILABLE: the database cannot be reached for the moment, or a write kept colliding with concurrent ones (nothing saved); try again after Retry-After seconds',
          headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } } },
          content: { 'application/json': { schema: ERROR_REF } },
        };
      }
    }
  }
}

/** Answers in the order of their status, as a reader looks them up. */
function sortAnswers(paths: Record<string, Json>): void {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item) as Json[]) {
      operation.responses = Object.fromEntries(Object.entries(operation.responses as Json).sort(([a], [b]) => a.localeCompare(b)));
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
 * unset), a public call about one workspace names it in X-Tenant-ID, a create answers 201, and a call
 * that may create (a PUT, an assignment) answers 201 or 200.
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
  if (meta.mayCreate && responses?.['200']) {
    const { '200': replaced, ...rest } = responses;
    const kept = meta.openapi?.method === 'PUT' ? 'Replaced' : 'Updated, or unchanged';
    operation.responses = { '200': { ...replaced, description: kept }, '201': { ...replaced, description: 'Created' }, ...rest };
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
      'Multi-tenant identity and access service. Every `/api/v1` and `/platform/v1` response is an envelope: ' +
      '`{"data": …}` (lists add `meta`: `total`, `page`, `per_page`) or `{"error": {"code", "message", "details"?}, ' +
      '"meta": {"request_id"}}` (`details` lists field problems on BAD_REQUEST, and on CONFLICT names the field whose value is taken). `/oauth/*` and `/.well-known/*` answer ' +
      'their RFC bodies (`{"error", "error_description"}` on errors). Every response carries `X-Request-ID`. Public ' +
      'calls (sign-in, password reset) name their workspace with the `X-Tenant-ID` header.',
    version: '1.0.0',
    openApiVersion: '3.1.0',
    baseUrl,
    securitySchemes: {
      Authorization: { type: 'http', scheme: 'bearer', description: 'A secret API key (sk_…) or a user access token' },
    },
  });
  const exact = exactPaths();
  const metas = metaByOperation();
  const schemas = withoutAdapterErrors(doc.components?.schemas ?? {});
  const paths: Record<string, Json> = {};
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      envelopeResponses(operation as Json);
      const meta = metas.get(`${method} ${path.replace(/\/+$/, '') || '/'}`);
      if (meta) {
        fromMeta(operation as Json, meta);
        errorAnswers(operation as Json, meta, method, path, schemas);
      }
    }
    paths[exact.get(path) ?? path] = item;
  }
  Object.assign(paths, protocolPaths(), browserSignInPaths(), structuredClone(HEALTH_PATHS));
  everyCallAnswers(paths);
  sortAnswers(paths);
  const components = {
    ...doc.components,
    schemas: { ...schemas, Error: ERROR_ENVELOPE },
    securitySchemes: { ...doc.components?.securitySchemes, ...PROTOCOL_SECURITY_SCHEMES },
  };
  return { ...doc, paths, components } as OpenAPIObject;
}

/**
 * The generator registers its own error bodies (`error.NOT_FOUND`: `{message, code, issues}`) as
 * components; the REST door never answers them (every error is the envelope), so they are left out.
 */
function withoutAdapterErrors(schemas: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => !name.startsWith('error.')));
}
