import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { APP_ERROR_CODES } from '../src/core/errors.ts';
import { buildOpenApiDocument } from '../src/core/openapi.ts';
import { procedureMeta } from '../src/router.ts';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from './helpers/app.ts';
import { signIn, someIp } from './helpers/auth.ts';
import { basicAuth, call } from './helpers/http.ts';
import {
  contentType,
  deeplyNested,
  hostileString,
  junkId,
  junkValue,
  malformedJson,
  prototypeKey,
  queryPart,
  toJsonText,
  type Junk,
} from './helpers/junk.ts';
import { stateChanges, workspaceState, type WorkspaceState } from './helpers/state.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/**
 * Generated junk at every REST endpoint (from the OpenAPI document, so a new endpoint joins by
 * existing), the OAuth protocol endpoints and GraphQL. The properties:
 * - never a 5xx, and on the REST door every error is the envelope whose request id is X-Request-ID;
 * - every status a REST endpoint answers is one the OpenAPI document lists for it;
 * - a request the service refuses changes nothing in the workspace: every table's rows are the same
 *   after it (compared whole), and the only new audit rows are failure rows (a refused sign-in or
 *   token request is recorded by design). A request it accepts (a junk name is still a name) may
 *   change things; the next comparison starts from there;
 * - bodies with a member no schema has, bodies that are not objects, malformed JSON and other content
 *   types are always refused;
 * - a path id that names nothing is 404 NOT_FOUND.
 *
 * Reproduce a failure with the seed it prints: HOSTILE_SEED=<seed> (HOSTILE_RUNS sets the runs per
 * endpoint, 12 by default).
 */

const SEED = Number(process.env.HOSTILE_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.HOSTILE_RUNS ?? 12);
const ONE_MIB = 1024 * 1024;

type Json = Record<string, unknown>;

interface Endpoint {
  method: string;
  path: string;
  /** Names of the JSON body's members (none: a body-less call). */
  bodyKeys: string[];
  hasBody: boolean;
  queryKeys: string[];
  pathParams: string[];
  /** Public: no credential (sign-in, refresh…); the rest is called with one. */
  secured: boolean;
  /** The statuses the document says it answers. */
  answers: string[];
}

const doc = buildOpenApiDocument('http://localhost');

function resolve(schema: unknown): Json {
  const ref = (schema as Json | undefined)?.$ref;
  if (typeof ref === 'string') {
    const name = ref.split('/').pop() as string;
    return ((doc.components?.schemas ?? {}) as Record<string, Json>)[name] ?? {};
  }
  return (schema ?? {}) as Json;
}

/** Member names of an object schema, unions included. */
function propertyNames(schema: unknown): string[] {
  const s = resolve(schema);
  const own = Object.keys((s.properties as Json | undefined) ?? {});
  const alternatives = [...((s.oneOf as unknown[]) ?? []), ...((s.anyOf as unknown[]) ?? []), ...((s.allOf as unknown[]) ?? [])];
  return [...new Set([...own, ...alternatives.flatMap(propertyNames)])];
}

const endpoints: Endpoint[] = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
  Object.entries(item as Record<string, Json>)
    .filter(() => path.startsWith('/api/v1/') || path.startsWith('/platform/v1/'))
    .map(([method, operation]) => {
      const parameters = (operation.parameters as { in: string; name: string }[] | undefined) ?? [];
      const content = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      return {
        method: method.toUpperCase(),
        path,
        bodyKeys: propertyNames(content?.['application/json']?.schema),
        hasBody: content !== undefined,
        queryKeys: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        secured: Array.isArray(operation.security) && operation.security.length > 0,
        answers: Object.keys((operation.responses as Json | undefined) ?? {}),
      };
    }),
);

const fromBody = (e: Endpoint) => e.method !== 'GET' && e.method !== 'DELETE';
/** Management calls (they need a permission, which an API key holds), wherever their path is. */
const MANAGEMENT = new Set(
  [...procedureMeta.values()].flatMap((meta) => (meta.permission && meta.openapi ? [`${meta.openapi.method} ${meta.openapi.path}`] : [])),
);
/** Calls a signed-in user makes as themself: an API key is refused (403) before anything else. */
const userOnly = (e: Endpoint) =>
  e.secured &&
  !MANAGEMENT.has(`${e.method} ${e.path}`) &&
  (/^\/api\/v1\/(auth|mfa)\//.test(e.path) || (e.method === 'POST' && e.path === '/api/v1/iga/requests'));

interface Sent {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

async function send(app: TestApp, method: string, path: string, opts: { headers?: Record<string, string>; body?: string }): Promise<Sent> {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { 'x-forwarded-for': someIp(), ...opts.headers },
    body: opts.body,
    redirect: 'manual',
  });
  const text = await res.text();
  let json: unknown;
  if ((res.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(text);
  return { status: res.status, headers: res.headers, text, json };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Our envelope: `{data}` on success, `{error: {code, message, details?}, meta: {request_id}}` on failure. */
function expectEnvelope(res: Sent, label: string): void {
  expect(res.status, `${label}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expect(res.json, `${label}: not JSON: ${res.text.slice(0, 200)}`).toBeDefined();
  const body = res.json as Json;
  const requestId = res.headers.get('x-request-id');
  expect(requestId, label).toBeTruthy();
  if (res.status < 400) {
    expect(Object.hasOwn(body, 'data'), label).toBe(true);
    return;
  }
  expect(isObject(body.error), label).toBe(true);
  const error = body.error as Json;
  expect(APP_ERROR_CODES, `${label}: code ${String(error.code)}`).toContain(error.code);
  expect(typeof error.message, label).toBe('string');
  expect(body.meta, label).toEqual({ request_id: requestId });
  if (error.details !== undefined) {
    expect(Array.isArray(error.details), label).toBe(true);
    for (const d of error.details as unknown[]) expect(d, label).toEqual({ path: expect.any(String), message: expect.any(String) });
  }
}

/** An OAuth error body (RFC 6749 §5.2): `{error, error_description?}`. */
function expectOAuthBody(res: Sent, label: string): void {
  expect(res.status, `${label}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expect(res.headers.get('x-request-id'), label).toBeTruthy();
  // A revocation answers 200 with no body (RFC 7009 §2.2); everything else is a JSON object.
  if (res.status === 200 && res.text === '') return;
  expect(isObject(res.json), `${label}: ${res.text.slice(0, 200)}`).toBe(true);
  const body = res.json as Json;
  if (res.status >= 400) {
    expect(typeof body.error, `${label}: ${res.text}`).toBe('string');
    expect(body.error as string, label).toMatch(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);
    if (body.error_description !== undefined) expect(typeof body.error_description, label).toBe('string');
  }
}

describe('hostile input', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let ownerToken: string;
  /** Real ids by the path's collection (`users`, `iga/reviews`…), so junk bodies reach real rows too. */
  const real: Record<string, string> = {};
  let web: { id: string; secret: string };
  let state: WorkspaceState;
  const tally = new Map<string, { runs: number; accepted: number }>();

  beforeAll(async () => {
    console.info(`hostile-input seed: ${SEED} (HOSTILE_SEED=${SEED} reproduces), ${RUNS} runs per endpoint`);
    app = await startTestApp();
    ws = await createWorkspace(app, 'Hostile');
    ownerToken = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    const post = async (path: string, body: object, token = ws.apiKey) => {
      const res = await call(app, 'POST', path, { token, body });
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(201);
      return res.body.data;
    };
    real.users = (await post('/api/v1/users', { email: uniqueEmail('target'), password: 'hostile target passphrase' })).id;
    real.roles = (await post('/api/v1/roles', { name: 'Target role', permissions: ['users:read'] })).id;
    real.groups = (await post('/api/v1/groups', { name: 'Target group' })).id;
    real.invitations = (await post('/api/v1/invitations', { email: uniqueEmail('invitee') })).id;
    real['api-keys'] = (await post('/api/v1/api-keys', { name: 'Target key' })).id;
    real.organizations = (await post('/api/v1/organizations', { name: 'Target org', domains: ['hostile-target.example'] })).id;
    const app1 = await post('/api/v1/applications', { name: 'Target app', type: 'web', redirect_uris: ['https://rp.example.com/cb'] });
    web = { id: app1.id, secret: app1.client_secret };
    real.applications = web.id;
    real['vault/objects'] = (await post('/api/v1/vault/objects/', { name: 'Target secret', value: 'target value' })).id;
    real['iga/reviews'] = (await post('/api/v1/iga/reviews', { name: 'Target review', scope: { type: 'everyone' } })).id;
    real.items = (await call(app, 'GET', `/api/v1/iga/reviews/${real['iga/reviews']}/items`, { token: ws.apiKey })).body.data[0].id;
    real['mfa/factors'] = (await post('/api/v1/mfa/factors/totp', { name: 'Target factor' }, ownerToken)).factor.id;
    real.domains = (await post('/api/v1/domains', { domain: `target-${ws.id.slice(4)}.example.com` })).id;
    real['idp-attributes'] = 'email';
    real['email-templates'] = 'invitation';
    real['auth/oauth/providers'] = 'google';
    state = await workspaceState(app, ws.id);
  });
  // Each test compares from where the workspace is now: a failed test leaves no stale baseline behind.
  beforeEach(async () => {
    if (app) state = await workspaceState(app, ws.id);
  });
  afterAll(async () => {
    const lines = [...tally].map(([k, v]) => `${k}: ${v.runs} runs, ${v.accepted} accepted`);
    console.info(`hostile-input coverage (seed ${SEED}):\n${lines.join('\n')}`);
    await app?.close();
  });

  /** Compares the workspace with the last state: a refused request must have changed nothing. */
  async function expectNoChange(label: string, refused: boolean): Promise<void> {
    const after = await workspaceState(app, ws.id);
    const changes = stateChanges(state, after);
    state = after;
    expect(changes.goneAudit, `${label}: audit rows vanished`).toEqual([]);
    if (!refused) return;
    expect(changes.tables, `${label}: a refused request changed these tables`).toEqual([]);
    for (const row of changes.newAudit) expect(row.outcome, `${label}: audit ${row.event_type} on a refused request`).toBe('failure');
  }

  function count(key: string, accepted: boolean) {
    const entry = tally.get(key) ?? { runs: 0, accepted: 0 };
    entry.runs++;
    if (accepted) entry.accepted++;
    tally.set(key, entry);
  }

  /** Calls that, accepted, end the owner's session the fuzz signs in with (logout; revoke-all ends every one). */
  const ENDS_CALLERS_SESSIONS = new Set(['POST /api/v1/auth/logout', 'POST /api/v1/auth/sessions/revoke-all']);

  /** A new session for the owner after a call ended theirs, and the baseline taken after it (a sign-in writes rows). */
  async function signInAgain(): Promise<void> {
    ownerToken = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    state = await workspaceState(app, ws.id);
  }

  function credentialHeaders(endpoint: Endpoint, who: 'apiKey' | 'user'): Record<string, string> {
    if (endpoint.path.startsWith('/platform/')) return { authorization: `Bearer ${PLATFORM_TOKEN}` };
    if (!endpoint.secured) return { 'x-tenant-id': ws.id };
    return { authorization: `Bearer ${who === 'apiKey' ? ws.apiKey : ownerToken}` };
  }

  /** The path with each `{param}` replaced: a real id of its collection when asked and there is one, else junk. */
  function fillPath(endpoint: Endpoint, ids: string[], useReal: boolean): string {
    let i = 0;
    return endpoint.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const junk = ids[i++] ?? 'x';
      if (!useReal) return junk;
      const collection =
        name === 'user_id' ? 'users' : name === 'item_id' ? 'items' : /^\/api\/v1\/([a-z/-]+?)\/\{/.exec(endpoint.path)?.[1];
      return (collection && real[collection]) ?? junk;
    });
  }

  type Shape =
    | { kind: 'extra-member'; entries: [string, Junk][]; extra: [string, Junk] }
    | { kind: 'known-members'; entries: [string, Junk][] }
    | { kind: 'not-an-object'; value: Junk }
    | { kind: 'malformed'; text: string }
    | { kind: 'content-type'; type: string; text: string }
    | { kind: 'query'; pairs: [string, string][] };

  function shapes(endpoint: Endpoint): fc.Arbitrary<Shape> {
    if (!fromBody(endpoint)) {
      const key = fc.oneof(
        ...(endpoint.queryKeys.length > 0 ? [{ weight: 3, arbitrary: fc.constantFrom(...endpoint.queryKeys) }] : []),
        { weight: 1, arbitrary: prototypeKey },
        { weight: 1, arbitrary: queryPart },
      );
      return fc.array(fc.tuple(key, queryPart), { maxLength: 6 }).map((pairs): Shape => ({ kind: 'query', pairs }));
    }
    const value = junkValue(endpoint.bodyKeys);
    const known = endpoint.bodyKeys.filter((k) => k !== 'id');
    const extraKey = fc.oneof(prototypeKey, hostileString).filter((k) => !endpoint.bodyKeys.includes(k));
    const options: fc.Arbitrary<Shape>[] = [
      fc
        .record({
          entries: fc.array(fc.tuple(known.length ? fc.constantFrom(...known) : prototypeKey, value), { maxLength: 4 }),
          extra: fc.tuple(extraKey, value),
        })
        .map((r): Shape => ({ kind: 'extra-member', ...r })),
      value.filter((v) => v.kind !== 'object').map((v): Shape => ({ kind: 'not-an-object', value: v })),
      malformedJson.map((text): Shape => ({ kind: 'malformed', text })),
      fc.tuple(contentType, value).map(([type, v]): Shape => ({ kind: 'content-type', type, text: toJsonText(v) })),
    ];
    if (known.length > 0) {
      const hostileLeaf = fc.oneof(
        hostileString.map((s): Junk => ({ kind: 'text', value: s })),
        fc.constantFrom<Junk>(
          { kind: 'token', text: '1e309' },
          { kind: 'token', text: '-0' },
          { kind: 'array', items: [] },
          { kind: 'object', entries: [] },
        ),
        value,
      );
      options.push(
        fc
          .uniqueArray(fc.tuple(fc.constantFrom(...known), hostileLeaf), { minLength: 1, maxLength: known.length, selector: ([k]) => k })
          .map((entries): Shape => ({ kind: 'known-members', entries })),
      );
    }
    return fc.oneof(...options);
  }

  function bodyOf(shape: Shape): { body?: string; type?: string } {
    switch (shape.kind) {
      case 'extra-member':
        return { body: toJsonText({ kind: 'object', entries: [...shape.entries, shape.extra] }), type: 'application/json' };
      case 'known-members':
        return { body: toJsonText({ kind: 'object', entries: shape.entries }), type: 'application/json' };
      case 'not-an-object':
        return { body: toJsonText(shape.value), type: 'application/json' };
      case 'malformed':
        return { body: shape.text, type: 'application/json' };
      case 'content-type':
        return { body: shape.text, type: shape.type };
      case 'query':
        return {};
    }
  }

  const restTargets = endpoints.map((e) => [e.method, e.path, e] as const);

  it('fuzzes every REST endpoint of the OpenAPI document', () => {
    expect(endpoints.length).toBeGreaterThanOrEqual(90);
  });

  it.each(restTargets)('%s %s: junk body, query and ids', async (_m, _p, endpoint) => {
    const property = fc.asyncProperty(
      fc.constantFrom<'apiKey' | 'user'>('apiKey', 'user'),
      fc.array(junkId, { minLength: endpoint.pathParams.length, maxLength: endpoint.pathParams.length }),
      // DELETE with a real id would delete it: deletes get junk ids only.
      endpoint.method === 'DELETE' ? fc.constant(false) : fc.boolean(),
      shapes(endpoint),
      async (who, ids, useReal, shape) => {
        const path = fillPath(endpoint, ids, useReal);
        const query = shape.kind === 'query' ? shape.pairs.map(([k, v]) => `${k}=${v}`).join('&') : '';
        const { body, type } = bodyOf(shape);
        const headers = { ...credentialHeaders(endpoint, who), ...(type !== undefined ? { 'content-type': type } : {}) };
        const label = `${endpoint.method} ${path}${query ? `?${query}` : ''} [${who}, ${shape.kind}] ${body?.slice(0, 200) ?? ''}`;
        const res = await send(app, endpoint.method, `${path}${query ? `?${query}` : ''}`, { headers, body });
        expectEnvelope(res, label);
        expect(endpoint.answers, `${label}: ${res.status} is not in the document`).toContain(String(res.status));
        const refused = res.status >= 400;
        // A `+json` type is read as JSON (app.ts), so its body is judged as a JSON body, not refused for its type.
        const readAsJson = shape.kind === 'content-type' && /^application\/[\w.-]+\+json$/i.test(shape.type);
        if (shape.kind !== 'query' && shape.kind !== 'known-members' && !readAsJson) expect(refused, `${label} was accepted`).toBe(true);
        if (shape.kind === 'malformed' || shape.kind === 'not-an-object') {
          expect([res.status, (res.json as { error: { code: string } }).error.code], label).toEqual([400, 'BAD_REQUEST']);
        }
        count(`${endpoint.method} ${endpoint.path}`, !refused);
        await expectNoChange(label, refused);
        if (!refused && who === 'user' && ENDS_CALLERS_SESSIONS.has(`${endpoint.method} ${endpoint.path}`)) await signInAgain();
      },
    );
    await fc.assert(property, { numRuns: RUNS, seed: SEED });
  });

  const idTargets = endpoints
    .filter((e) => e.pathParams.length > 0 && (!fromBody(e) || !e.hasBody))
    .map((e) => [e.method, e.path, e] as const);

  it.each(idTargets)('%s %s: an id that names nothing is 404', async (_m, _p, endpoint) => {
    const property = fc.asyncProperty(
      fc.constantFrom<'apiKey' | 'user'>('apiKey', 'user'),
      fc.array(junkId, { minLength: endpoint.pathParams.length, maxLength: endpoint.pathParams.length }),
      async (who, ids) => {
        const path = fillPath(endpoint, ids, false);
        const res = await send(app, endpoint.method, path, { headers: credentialHeaders(endpoint, who) });
        const label = `${endpoint.method} ${path} [${who}]`;
        expectEnvelope(res, label);
        const expected = who === 'apiKey' && userOnly(endpoint) ? [403, 'FORBIDDEN'] : [404, 'NOT_FOUND'];
        expect([res.status, (res.json as { error: { code: string } }).error.code], label).toEqual(expected);
        await expectNoChange(label, true);
      },
    );
    await fc.assert(property, { numRuns: Math.ceil(RUNS / 2), seed: SEED });
  });

  const bodyTargets = endpoints.filter(fromBody).map((e) => [e.method, e.path, e] as const);

  it.each(bodyTargets)(
    '%s %s: a body past 1 MiB is 413, 10,000 levels of nesting 400, a string just under 1 MiB never a 5xx',
    async (_m, _p, endpoint) => {
      const headers = { ...credentialHeaders(endpoint, userOnly(endpoint) ? 'user' : 'apiKey'), 'content-type': 'application/json' };
      const path = fillPath(
        endpoint,
        endpoint.pathParams.map(() => 'x'),
        true,
      );
      const key = endpoint.bodyKeys.find((k) => k !== 'id') ?? 'name';
      const over = `{"${key}":"${'a'.repeat(ONE_MIB)}"}`;
      const tooBig = await send(app, endpoint.method, path, { headers, body: over });
      expectEnvelope(tooBig, `${endpoint.method} ${path} over 1 MiB`);
      expect([tooBig.status, (tooBig.json as { error: { code: string } }).error.code]).toEqual([413, 'BAD_REQUEST']);
      for (const nested of [deeplyNested(10_000), deeplyNested(10_000, 'object'), `{"${key}":${deeplyNested(10_000)}}`]) {
        const res = await send(app, endpoint.method, path, { headers, body: nested });
        expectEnvelope(res, `${endpoint.method} ${path} nested`);
        expect([res.status, (res.json as { error: { code: string } }).error.code]).toEqual([400, 'BAD_REQUEST']);
      }
      const under = `{"${key}":"${'\u00e9'.repeat((ONE_MIB - 64) / 2)}"}`;
      const big = await send(app, endpoint.method, path, { headers, body: under });
      expectEnvelope(big, `${endpoint.method} ${path} just under 1 MiB`);
      await expectNoChange(`${endpoint.method} ${path} large bodies`, big.status >= 400);
    },
  );

  it('answers a request line over 16 KiB with 431 in the envelope', async () => {
    for (const path of [
      `/api/v1/users?q=${'x'.repeat(20_000)}`,
      `/api/v1/users/${'x'.repeat(20_000)}`,
      `/oauth/token?${'a'.repeat(20_000)}`,
    ]) {
      const res = await send(app, 'GET', path, { headers: { authorization: `Bearer ${ws.apiKey}` } });
      expect(res.status).toBe(431);
      expectEnvelope({ ...res, status: 431 }, 'long request line');
      expect((res.json as { error: { code: string } }).error.code).toBe('BAD_REQUEST');
    }
  });

  describe('OAuth protocol endpoints', () => {
    const PARAMS = [
      'grant_type',
      'code',
      'redirect_uri',
      'code_verifier',
      'refresh_token',
      'scope',
      'client_id',
      'client_secret',
      'token',
      'token_type_hint',
    ];
    const paramValue = fc.oneof(
      hostileString,
      fc.constantFrom(
        'authorization_code',
        'refresh_token',
        'client_credentials',
        'password',
        'implicit',
        'urn:ietf:params:oauth:grant-type:device_code',
        'openid',
        'access_token',
      ),
    );
    const param = fc.tuple(fc.oneof(fc.constantFrom(...PARAMS), prototypeKey, hostileString), paramValue);
    type Auth = 'none' | 'basic' | 'basic-wrong' | 'basic-junk' | 'post';
    type Body =
      | { kind: 'form'; params: [string, string][] }
      | { kind: 'raw-form'; text: string }
      | { kind: 'json'; value: Junk }
      | { kind: 'malformed-json'; text: string }
      | { kind: 'content-type'; type: string; text: string };
    const bodies: fc.Arbitrary<Body> = fc.oneof(
      { weight: 3, arbitrary: fc.array(param, { maxLength: 6 }).map((params): Body => ({ kind: 'form', params })) },
      {
        weight: 1,
        arbitrary: fc
          .array(fc.tuple(queryPart, queryPart), { maxLength: 5 })
          .map((pairs): Body => ({ kind: 'raw-form', text: pairs.map(([k, v]) => `${k}=${v}`).join('&') })),
      },
      {
        weight: 2,
        arbitrary: fc
          .oneof(
            junkValue(PARAMS),
            fc
              .array(param, { maxLength: 6 })
              .map((params): Junk => ({ kind: 'object', entries: params.map(([k, v]) => [k, { kind: 'text', value: v }]) })),
          )
          .map((value): Body => ({ kind: 'json', value })),
      },
      { weight: 1, arbitrary: malformedJson.map((text): Body => ({ kind: 'malformed-json', text })) },
      {
        weight: 1,
        arbitrary: fc.tuple(contentType, fc.string({ maxLength: 50 })).map(([type, text]): Body => ({ kind: 'content-type', type, text })),
      },
    );

    function authHeaders(auth: Auth): Record<string, string> {
      if (auth === 'basic') return { authorization: basicAuth(web.id, web.secret) };
      if (auth === 'basic-wrong') return { authorization: basicAuth(web.id, 'not-the-secret') };
      if (auth === 'basic-junk') return { authorization: 'Basic !!not base64:::' };
      return {};
    }

    function encode(body: Body, auth: Auth): { text: string; type: string } {
      const credentials: [string, string][] =
        auth === 'post'
          ? [
              ['client_id', web.id],
              ['client_secret', web.secret],
            ]
          : [];
      switch (body.kind) {
        case 'form':
          return { text: new URLSearchParams([...credentials, ...body.params]).toString(), type: 'application/x-www-form-urlencoded' };
        case 'raw-form':
          return { text: body.text, type: 'application/x-www-form-urlencoded' };
        case 'json':
          return { text: toJsonText(body.value), type: 'application/json' };
        case 'malformed-json':
          return { text: body.text, type: 'application/json' };
        case 'content-type':
          return { text: body.text, type: body.type };
      }
    }

    it.each(['/oauth/token', '/oauth/introspect', '/oauth/revoke'])(
      '%s: junk forms and JSON get RFC error bodies, never a 5xx',
      async (path) => {
        const property = fc.asyncProperty(
          fc.constantFrom<Auth>('none', 'basic', 'basic-wrong', 'basic-junk', 'post'),
          bodies,
          async (auth, body) => {
            const { text, type } = encode(body, auth);
            const label = `POST ${path} [${auth}, ${body.kind}] ${text.slice(0, 200)}`;
            const res = await send(app, 'POST', path, { headers: { ...authHeaders(auth), 'content-type': type }, body: text });
            expectOAuthBody(res, label);
            if (path === '/oauth/token') {
              if (res.status === 200) {
                // The target is a web app, which may act as itself: a well-formed client_credentials
                // request that carries its secret is served, and only such a one (no user, no refresh token).
                expect(['basic', 'post'], label).toContain(auth);
                expect(res.json, label).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
                expect(res.json, label).not.toHaveProperty('refresh_token');
              } else {
                expect(res.status, label).toBeGreaterThanOrEqual(400);
              }
              expect(res.headers.get('cache-control'), label).toContain('no-store');
            }
            if (body.kind === 'malformed-json') expect([res.status, (res.json as Json).error], label).toEqual([400, 'invalid_request']);
            count(`POST ${path}`, res.status < 400);
            await expectNoChange(label, !(path === '/oauth/token' && res.status === 200));
          },
        );
        // The one well-formed request among the junk, every run: the client acting as itself.
        const wellFormed: [Auth, Body] = ['basic', { kind: 'form', params: [['grant_type', 'client_credentials']] }];
        await fc.assert(property, { numRuns: RUNS * 4, seed: SEED, examples: [wellFormed] });
      },
    );

    it('a JSON body past the limit is refused and the connection stays usable for the next request (was ECONNRESET)', async () => {
      const oversized = JSON.stringify({ grant_type: 'client_credentials', pad: 'x'.repeat(135_000) });
      for (let i = 0; i < 3; i++) {
        const refused = await send(app, 'POST', '/oauth/token', { headers: { 'content-type': 'application/json' }, body: oversized });
        expect([refused.status, (refused.json as Json).error]).toEqual([400, 'invalid_request']);
        const next = await send(app, 'POST', '/oauth/token', { headers: { 'content-type': 'application/json' }, body: '{"k":"' });
        expect([next.status, (next.json as Json).error]).toEqual([400, 'invalid_request']);
      }
    });

    it('a token, code or client id holding NUL or a lone surrogate names nothing: no 5xx (token=a%00b)', async () => {
      const authorization = basicAuth(web.id, web.secret);
      const introspect = await send(app, 'POST', '/oauth/introspect', {
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'token=a%00b',
      });
      expect([introspect.status, introspect.json]).toEqual([200, { active: false }]);
      const revoke = await send(app, 'POST', '/oauth/revoke', {
        headers: { authorization, 'content-type': 'application/json' },
        body: '{"token":"a\\ud800"}',
      });
      expect(revoke.status).toBe(200);
      const token = await send(app, 'POST', '/oauth/token', {
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&code=a%00b&redirect_uri=https%3A%2F%2Fexample.com%2Fcb&code_verifier=x',
      });
      expect([token.status, (token.json as Json).error]).toEqual([400, 'invalid_grant']);
      const client = await send(app, 'POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_id=app_%00&client_secret=x',
      });
      expect([client.status, (client.json as Json).error]).toEqual([401, 'invalid_client']);
    });
  });

  describe('GraphQL', () => {
    const DOCUMENTS = [
      'query($q: String, $p: Int, $pp: Int, $s: UserStatus) { users(q: $q, page: $p, perPage: $pp, status: $s) { data { id } meta { total } } }',
      'query($id: ID!) { user(id: $id) { id email } }',
      'query($q: String) { groups(q: $q) { meta { total } } }',
      'query($f: AuditFilter, $g: AuditGrouping!) { auditEventCounts(filter: $f, groupBy: $g) { key count } }',
      'query($since: String, $m: Int) { riskScores(since: $since, minScore: $m) { meta { total } } }',
      'query($id: ID!, $r: ID!) { accessReview(id: $id) { id } accessReviewItems(reviewId: $r) { meta { total } } }',
      'mutation($input: CreateUserInput!) { createUser(input: $input) { id } }',
      'mutation($id: ID!) { revokeSession(id: $id) }',
    ];
    const VARIABLES = [
      'q',
      'p',
      'pp',
      's',
      'id',
      'f',
      'g',
      'since',
      'm',
      'r',
      'input',
      'email',
      'password',
      'name',
      'eventType',
      'outcome',
    ];
    type Request =
      | { kind: 'document'; query: string; variables: Junk }
      | { kind: 'junk-query'; query: Junk }
      | { kind: 'text'; query: string }
      | { kind: 'body'; text: string; type: string };
    const requests: fc.Arbitrary<Request> = fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .tuple(fc.constantFrom(...DOCUMENTS), junkValue(VARIABLES))
          .map(([query, variables]): Request => ({ kind: 'document', query, variables })),
      },
      {
        weight: 1,
        arbitrary: junkValue(['query', 'variables', 'operationName', 'extensions']).map((query): Request => ({
          kind: 'junk-query',
          query,
        })),
      },
      {
        weight: 2,
        arbitrary: fc
          .oneof(
            hostileString,
            fc.constantFrom(
              '{',
              '{ users }',
              '{ __schema { types { name } } }',
              'query { users(page: "x") { meta { total } } }',
              'subscription { x }',
              '{ users { data { id ...F } } } fragment F on User { ...F }',
            ),
            fc.integer({ min: 1, max: 10_000 }).map((n) => `${'{ users { data { id '.repeat(1)}${'a { '.repeat(n)}${'}'.repeat(n + 3)}`),
          )
          .map((query): Request => ({ kind: 'text', query })),
      },
      {
        weight: 1,
        arbitrary: fc.oneof(
          malformedJson.map((text): Request => ({ kind: 'body', text, type: 'application/json' })),
          fc.tuple(contentType, fc.string({ maxLength: 50 })).map(([type, text]): Request => ({ kind: 'body', text, type })),
        ),
      },
    );

    function bodyText(request: Request): { text: string; type: string } {
      switch (request.kind) {
        case 'document':
          return {
            text: `{"query":${JSON.stringify(request.query)},"variables":${toJsonText(request.variables)}}`,
            type: 'application/json',
          };
        case 'junk-query':
          return { text: toJsonText(request.query), type: 'application/json' };
        case 'text':
          return { text: JSON.stringify({ query: request.query }), type: 'application/json' };
        case 'body':
          return { text: request.text, type: request.type };
      }
    }

    it('junk documents, variables and bodies are never a 5xx nor an internal error', async () => {
      const property = fc.asyncProperty(fc.constantFrom<'apiKey' | 'user'>('apiKey', 'user'), requests, async (who, request) => {
        const { text, type } = bodyText(request);
        const label = `POST /graphql [${who}, ${request.kind}] ${text.slice(0, 300)}`;
        const res = await send(app, 'POST', '/graphql', {
          headers: { authorization: `Bearer ${who === 'apiKey' ? ws.apiKey : ownerToken}`, 'content-type': type },
          body: text,
        });
        expect(res.status, `${label}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
        const errors =
          isObject(res.json) && Array.isArray(res.json.errors)
            ? (res.json.errors as { message?: string; extensions?: { code?: string } }[])
            : [];
        for (const error of errors) {
          expect(error.extensions?.code, `${label}: ${JSON.stringify(error)}`).not.toBe('INTERNAL');
          expect(error.message, label).not.toBe('Unexpected error.');
        }
        const accepted = res.status < 400 && errors.length === 0;
        count('POST /graphql', accepted);
        await expectNoChange(label, !accepted);
      });
      await fc.assert(property, { numRuns: RUNS * 10, seed: SEED });
    });

    it('a junk GET query string is never a 5xx', async () => {
      const property = fc.asyncProperty(
        fc.array(fc.tuple(fc.oneof(fc.constantFrom('query', 'variables', 'operationName', 'extensions'), queryPart), queryPart), {
          maxLength: 4,
        }),
        async (pairs) => {
          const query = pairs.map(([k, v]) => `${k}=${v}`).join('&');
          const res = await send(app, 'GET', `/graphql?${query}`, {
            headers: { authorization: `Bearer ${ws.apiKey}`, accept: 'application/json' },
          });
          expect(res.status, `GET /graphql?${query}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
          count('GET /graphql', res.status < 400);
          await expectNoChange(`GET /graphql?${query}`, true);
        },
      );
      await fc.assert(property, { numRuns: RUNS * 2, seed: SEED });
    });
  });

  describe('inputs the fuzz found (each was a bug)', () => {
    it('a body-less POST refuses body members it does not know (rotate-secret used to rotate, ignoring them)', async () => {
      const before = await workspaceState(app, ws.id);
      const res = await call(app, 'POST', `/api/v1/applications/${web.id}/rotate-secret`, { token: ws.apiKey, body: { name: [[1]] } });
      expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
      expect(res.body.error.details).toEqual([{ path: 'name', message: 'is not a known field' }]);
      expect(stateChanges(before, await workspaceState(app, ws.id)).tables).toEqual([]);
      const resend = await call(app, 'POST', `/api/v1/invitations/${real.invitations}/resend`, {
        token: ws.apiKey,
        body: { __proto__x: 1 },
      });
      expect(resend.status).toBe(400);
      // The path's own id in the body is refused too (it was ignored, the path winning): the path alone names the resource.
      const same = await call(app, 'POST', `/api/v1/domains/${real.domains}/verify`, { token: ws.apiKey, body: { id: 'dom_other' } });
      expect([same.status, same.body.error.details]).toEqual([
        400,
        [{ path: 'id', message: 'is given by the path; leave it out of the body' }],
      ]);
      state = await workspaceState(app, ws.id);
    });

    it('a body under another content type, or none, is 400 and not read as {} (PATCH users/{id} "1e309" used to succeed)', async () => {
      for (const type of ['', 'application/jsonx', 'json', '*/*', 'text/plain']) {
        const res = await send(app, 'PATCH', `/api/v1/users/${real.users}`, {
          headers: { authorization: `Bearer ${ws.apiKey}`, 'content-type': type },
          body: '1e309',
        });
        expect([res.status, (res.json as { error: { code: string } }).error.code], type).toEqual([400, 'BAD_REQUEST']);
      }
      await expectNoChange('PATCH users with other content types', true);
      const empty = await send(app, 'POST', '/api/v1/auth/logout', { headers: { authorization: `Bearer ${ws.apiKey}` } });
      expect(empty.status).toBe(403);
    });

    it('a path id that fails validation is 404, not 400 (an id over 100 characters, a NUL)', async () => {
      for (const path of [
        `/api/v1/groups/%00/members/${'x'.repeat(101)}`,
        `/api/v1/users/${'x'.repeat(101)}`,
        `/api/v1/applications/${'a'.repeat(500)}`,
      ]) {
        const res = await call(app, path.includes('members') ? 'DELETE' : 'GET', path, { token: ws.apiKey });
        expect([res.status, res.body.error.code], path).toEqual([404, 'NOT_FOUND']);
      }
      const badBody = await call(app, 'PATCH', `/api/v1/users/${'x'.repeat(101)}`, { token: ws.apiKey, body: { name: 7 } });
      expect(badBody.status).toBe(400);
    });

    it('a NUL in a path id ranks like any malformed id: after the credential (403) and the body (400), before the lookup (404)', async () => {
      const forbidden = await call(app, 'DELETE', '/api/v1/auth/sessions/%00', { token: ws.apiKey });
      expect([forbidden.status, forbidden.body.error.code]).toEqual([403, 'FORBIDDEN']);
      const notAnObject = await call(app, 'POST', '/api/v1/iga/reviews/usr_/items/%00/decide', { token: ws.apiKey, body: [] });
      expect([notAnObject.status, notAnObject.body.error.code]).toEqual([400, 'BAD_REQUEST']);
      const nulInBodyToo = await call(app, 'PATCH', '/api/v1/users/%00', { token: ws.apiKey, body: { name: 'a\u0000' } });
      expect([nulInBodyToo.status, nulInBodyToo.body.error.code]).toEqual([400, 'BAD_REQUEST']);
      const surrogate = await call(app, 'GET', '/api/v1/users/usr_%ED%A0%80', { token: ws.apiKey });
      expect([surrogate.status, surrogate.body.error.code]).toEqual([404, 'NOT_FOUND']);
    });

    it('a GraphQL variable that does not coerce is BAD_REQUEST, not INTERNAL ({"p": ""} for an Int)', async () => {
      const res = await call(app, 'POST', '/graphql', {
        token: ws.apiKey,
        body: { query: 'query($p: Int) { users(page: $p) { meta { total } } }', variables: { p: '' } },
      });
      expect(res.status).toBeLessThan(500);
      expect(res.body.errors[0].extensions.code).toBe('BAD_REQUEST');
      expect(res.body.errors[0].message).toContain('Int cannot represent');
    });

    it('GET /graphql with extensions or variables that are not JSON, or repeated, is 400, not 500 (extensions=%)', async () => {
      for (const query of [
        'query=%7B__typename%7D&extensions=%',
        'query=%7B__typename%7D&variables=%7B',
        'query=%7B__typename%7D&variables=1e309&variables=%7B%7D',
      ]) {
        const res = await call(app, 'GET', `/graphql?${query}`, { token: ws.apiKey, headers: { accept: 'application/json' } });
        expect(res.status, query).toBe(400);
        expect(res.body.errors[0].extensions.code).toBe('BAD_REQUEST');
      }
      const fine = await call(app, 'GET', '/graphql?query=%7B__typename%7D', { token: ws.apiKey, headers: { accept: 'application/json' } });
      expect(fine.body.data).toEqual({ __typename: 'Query' });
    });

    it('a GraphQL document nested thousands of levels is refused, not a stack overflow (500)', async () => {
      for (const depth of [40, 700, 3_000, 10_000]) {
        const query = `{ users { data { id ${'a { '.repeat(depth)}b${' }'.repeat(depth)} } } }`;
        const res = await call(app, 'POST', '/graphql', { token: ws.apiKey, body: { query } });
        expect(res.status, `depth ${depth}`).toBeLessThan(500);
        expect(res.body.errors[0].message).toMatch(/nested deeper than 32 levels|more that 2000 tokens/);
      }
    });
  });
});
