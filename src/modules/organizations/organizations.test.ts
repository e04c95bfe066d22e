import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

describe('organizations and identity-provider attributes', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Orgs');
    other = await createWorkspace(app, 'Other');
  });
  afterAll(() => app.close());

  it('creates, lists, updates and deletes an organization with normalized domains', async () => {
    const created = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Acme Corp', domains: ['ACME.example.', ' acme.example', 'Sub.Acme.Example'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      name: 'Acme Corp',
      domains: ['acme.example', 'sub.acme.example'],
      sso: { enabled: true, jit_provisioning: true, default_role: 'member' },
      connection: null,
      member_count: 0,
    });
    expect(created.body.data.id).toMatch(/^org_/);
    const id = created.body.data.id as string;

    const list = await call(app, 'GET', '/api/v1/organizations?per_page=5', { token: ws.apiKey });
    expect(list.body.meta).toEqual({ total: 1, page: 1, per_page: 5 });
    expect(list.body.data[0].id).toBe(id);

    const updated = await call(app, 'PATCH', `/api/v1/organizations/${id}`, {
      token: ws.apiKey,
      body: { name: 'Acme Inc', domains: ['acme.example', 'acme-labs.example'], sso: { jit_provisioning: false, default_role: 'viewer' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({
      name: 'Acme Inc',
      domains: ['acme-labs.example', 'acme.example'],
      sso: { enabled: true, jit_provisioning: false, default_role: 'viewer' },
    });

    // Nothing submitted yet: an empty connection, with the values the IT admin's identity provider needs.
    const noConnection = await call(app, 'GET', `/api/v1/organizations/${id}/sso-connection`, { token: ws.apiKey });
    expect(noConnection.status).toBe(200);
    expect(noConnection.body.data).toMatchObject({ id: null, organization_id: id, kind: null, active: false, oidc: null, saml: null });
    expect(noConnection.body.data.service_provider.acs_url).toContain(`/api/v1/auth/sso/saml/${id}/acs`);

    const deleted = await call(app, 'DELETE', `/api/v1/organizations/${id}`, { token: ws.apiKey });
    expect(deleted.body.data).toEqual({ id, deleted: true });
    expect((await call(app, 'PATCH', `/api/v1/organizations/${id}`, { token: ws.apiKey, body: { name: 'x' } })).status).toBe(404);
    // Its domains are free again.
    const reuse = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Acme 2', domains: ['acme.example'] },
    });
    expect(reuse.status).toBe(201);
  });

  it('finds an organization by name however its accents were typed (q in NFC, as names are kept)', async () => {
    const created = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Société Générale Ñ' } });
    expect(created.status).toBe(201);
    for (const q of ['Socie\u0301te\u0301', 'Ge\u0301ne\u0301rale N\u0303', 'société']) {
      const listed = await call(app, 'GET', `/api/v1/organizations?q=${encodeURIComponent(q)}`, { token: ws.apiKey });
      expect([q, listed.status, listed.body.data.map((o: { id: string }) => o.id)]).toEqual([q, 200, [created.body.data.id]]);
    }
    await call(app, 'DELETE', `/api/v1/organizations/${created.body.data.id}`, { token: ws.apiKey });
  });

  it('gives a domain to at most one organization per workspace (409), also when two claim it at once', async () => {
    await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Globex', domains: ['globex.example'] } });
    const taken = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Fake', domains: ['GLOBEX.example.'] },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('CONFLICT');
    // Another workspace may have the same domain for its own organization.
    expect(
      (await call(app, 'POST', '/api/v1/organizations', { token: other.apiKey, body: { name: 'G', domains: ['globex.example'] } })).status,
    ).toBe(201);

    const racers = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: `Racer ${n}`, domains: ['race.example'] } }),
      ),
    );
    expect(racers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it.each([
    [{ name: '' }],
    [{ name: 'x', domains: ['not a domain'] }],
    [{ name: 'x', domains: ['nodot'] }],
    [{ name: 'x', domains: ['-bad.example'] }],
    [{ name: 'x', sso: { default_role: 'nope' } }],
    [{ name: 'x', sso: { default_role: 'owner' } }],
    [{ name: 'x', workspace_id: 'wsp_x' }],
  ])('refuses %j with 400', async (body) => {
    const res = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  /**
   * JIT provisioning never creates an owner: of the ways a user is inserted into an existing workspace,
   * only an invitation's acceptance can give the owner role, and it takes the role's row before the
   * user's counter row (the lock order written on invitations/retire.ts `lockAddress`).
   */
  it('refuses owner as the role SSO gives new users on a change too (400), keeping the one it had', async () => {
    const org = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'No Owners Co' } });
    expect(org.status).toBe(201);
    const path = `/api/v1/organizations/${org.body.data.id}`;
    const changed = await call(app, 'PATCH', path, { token: ws.apiKey, body: { sso: { default_role: 'owner' } } });
    expect([changed.status, changed.body.error?.details]).toEqual([400, [{ path: 'sso.default_role', message: 'must not be owner' }]]);
    expect((await call(app, 'GET', path, { token: ws.apiKey })).body.data.sso.default_role).toBe('member');
  });

  it('keeps a custom role that an organization gives its new SSO users (409), until the organization names another', async () => {
    const role = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { key: 'contractor', name: 'Contractor', permissions: ['users:read'] },
    });
    expect(role.status).toBe(201);
    const org = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Contracting Co', domains: ['contracting.example'], sso: { default_role: 'contractor' } },
    });
    expect(org.status).toBe(201);
    const refused = await call(app, 'DELETE', `/api/v1/roles/${role.body.data.id}`, { token: ws.apiKey });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(JSON.stringify(refused.body.error.details)).toContain(org.body.data.id);
    const still = await call(app, 'GET', `/api/v1/organizations/${org.body.data.id}`, { token: ws.apiKey });
    expect(still.body.data.sso.default_role).toBe('contractor');

    // Another workspace's organization giving a role of the same key does not hold this one.
    const theirs = await call(app, 'POST', '/api/v1/roles', { token: other.apiKey, body: { key: 'temp', name: 'Temp', permissions: [] } });
    const ours = await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { key: 'temp', name: 'Temp', permissions: [] } });
    await call(app, 'POST', '/api/v1/organizations', { token: other.apiKey, body: { name: 'Temps', sso: { default_role: 'temp' } } });
    expect(theirs.status).toBe(201);
    expect((await call(app, 'DELETE', `/api/v1/roles/${ours.body.data.id}`, { token: ws.apiKey })).status).toBe(200);

    await call(app, 'PATCH', `/api/v1/organizations/${org.body.data.id}`, { token: ws.apiKey, body: { sso: { default_role: 'member' } } });
    const deleted = await call(app, 'DELETE', `/api/v1/roles/${role.body.data.id}`, { token: ws.apiKey });
    expect(deleted.status).toBe(200);
  });

  it('lets only a caller who holds every permission of a role make it what SSO gives new users (403 otherwise)', async () => {
    await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { key: 'org_manager', name: 'Org manager', permissions: ['organizations:read', 'organizations:write'] },
    });
    const email = uniqueEmail('orgmanager');
    const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'manager passphrase' } });
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.body.data.id, role_id: 'org_manager' } });
    const manager = (await signIn(app, ws.id, email, 'manager passphrase')).accessToken;

    const asAdmin = await call(app, 'POST', '/api/v1/organizations', {
      token: manager,
      body: { name: 'Escalation Co', domains: ['escalation.example'], sso: { default_role: 'admin' } },
    });
    expect([asAdmin.status, asAdmin.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    const plain = await call(app, 'POST', '/api/v1/organizations', {
      token: manager,
      body: { name: 'Escalation Co', domains: ['escalation.example'] },
    });
    expect(plain.status).toBe(201);
    const id = plain.body.data.id as string;
    const raised = await call(app, 'PATCH', `/api/v1/organizations/${id}`, { token: manager, body: { sso: { default_role: 'admin' } } });
    expect([raised.status, raised.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    expect((await call(app, 'GET', `/api/v1/organizations/${id}`, { token: ws.apiKey })).body.data.sso.default_role).toBe('member');

    // An admin may; the manager still edits the rest of that organization.
    const byAdmin = await call(app, 'PATCH', `/api/v1/organizations/${id}`, {
      token: ws.apiKey,
      body: { sso: { default_role: 'viewer' } },
    });
    expect(byAdmin.status).toBe(200);
    const renamed = await call(app, 'PATCH', `/api/v1/organizations/${id}`, {
      token: manager,
      body: { name: 'Escalation Inc', sso: { jit_provisioning: false } },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Escalation Inc', sso: { default_role: 'viewer', jit_provisioning: false } });
  });

  it('lists, adds and removes the members of an organization; a member twice is 409, a stranger 404', async () => {
    const org = (await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Members Inc' } })).body.data
      .id as string;
    const email = uniqueEmail('org-member');
    const user = (await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'member passphrase' } })).body.data;
    const members = `/api/v1/organizations/${org}/members`;

    const empty = await call(app, 'GET', members, { token: ws.apiKey });
    expect([empty.status, empty.body.data, empty.body.meta]).toEqual([200, [], { total: 0, page: 1, per_page: 20 }]);

    const added = await call(app, 'POST', members, { token: ws.apiKey, body: { user_id: user.id } });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({ organization_id: org, user_id: user.id, email, name: null });
    const again = await call(app, 'POST', members, { token: ws.apiKey, body: { user_id: user.id } });
    expect([again.status, again.body.error.code, again.body.error.details]).toEqual([
      409,
      'CONFLICT',
      [{ path: 'user_id', message: 'is already a member' }],
    ]);
    const stranger = (await call(app, 'GET', '/api/v1/users?per_page=1', { token: other.apiKey })).body.data[0].id as string;
    for (const userId of [stranger, 'usr_nobody', 'nonsense']) {
      const refused = await call(app, 'POST', members, { token: ws.apiKey, body: { user_id: userId } });
      expect([refused.status, refused.body.error.code], userId).toEqual([404, 'NOT_FOUND']);
    }
    expect((await call(app, 'POST', members, { token: ws.apiKey, body: {} })).status).toBe(400);

    const listed = await call(app, 'GET', `${members}?per_page=5`, { token: ws.apiKey });
    expect(listed.body.data).toEqual([added.body.data]);
    expect(listed.body.meta).toEqual({ total: 1, page: 1, per_page: 5 });
    expect((await call(app, 'GET', `/api/v1/organizations/${org}`, { token: ws.apiKey })).body.data.member_count).toBe(1);
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=organization.member_add&outcome=success&per_page=1', {
      token: ws.apiKey,
    });
    expect(audit.body.data[0]).toMatchObject({ target: { type: 'organization', id: org }, details: { user_id: user.id } });

    // Another workspace sees no such organization.
    expect((await call(app, 'GET', members, { token: other.apiKey })).status).toBe(404);
    expect((await call(app, 'POST', members, { token: other.apiKey, body: { user_id: stranger } })).status).toBe(404);
    expect((await call(app, 'GET', '/api/v1/organizations/org_nobody/members', { token: ws.apiKey })).status).toBe(404);

    // Readers read; a member neither reads nor writes.
    const asMember = (await signIn(app, ws.id, email, 'member passphrase')).accessToken;
    expect((await call(app, 'GET', members, { token: asMember })).status).toBe(403);
    expect((await call(app, 'DELETE', `${members}/${user.id}`, { token: asMember })).status).toBe(403);

    const removed = await call(app, 'DELETE', `${members}/${user.id}`, { token: ws.apiKey });
    expect([removed.status, removed.body.data]).toEqual([200, { id: user.id, deleted: true }]);
    expect((await call(app, 'DELETE', `${members}/${user.id}`, { token: ws.apiKey })).status).toBe(404);
    expect((await call(app, 'GET', members, { token: ws.apiKey })).body.meta.total).toBe(0);
    // The account stays.
    expect((await call(app, 'GET', `/api/v1/users/${user.id}`, { token: ws.apiKey })).status).toBe(200);
  });

  it('lets viewers read and refuses members', async () => {
    const email = uniqueEmail('viewer');
    const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'viewer passphrase' } });
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const viewer = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    const asMember = (await signIn(app, ws.id, email, 'viewer passphrase')).accessToken;
    expect((await call(app, 'GET', '/api/v1/organizations', { token: asMember })).status).toBe(403);
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.body.data.id, role_id: viewer } });
    const asViewer = (await signIn(app, ws.id, email, 'viewer passphrase')).accessToken;
    expect((await call(app, 'GET', '/api/v1/organizations', { token: asViewer })).status).toBe(200);
    expect((await call(app, 'GET', '/api/v1/idp-attributes', { token: asViewer })).status).toBe(200);
    const org = (await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Read Me' } })).body.data.id as string;
    expect((await call(app, 'GET', `/api/v1/organizations/${org}/members`, { token: asViewer })).status).toBe(200);
    const join = await call(app, 'POST', `/api/v1/organizations/${org}/members`, { token: asViewer, body: { user_id: user.body.data.id } });
    expect(join.status).toBe(403);
    expect((await call(app, 'POST', '/api/v1/organizations', { token: asViewer, body: { name: 'No' } })).status).toBe(403);
    expect((await call(app, 'PATCH', '/api/v1/idp-attributes/locale', { token: asViewer, body: { enabled: true } })).status).toBe(403);
  });

  it('lists built-in attributes, creates custom ones and switches them on and off', async () => {
    const list = await call(app, 'GET', '/api/v1/idp-attributes?per_page=100', { token: ws.apiKey });
    expect(list.status).toBe(200);
    const keys = list.body.data.map((a: { key: string }) => a.key);
    expect(keys).toEqual(expect.arrayContaining(['email', 'first_name', 'last_name', 'groups']));
    expect(list.body.data.find((a: { key: string }) => a.key === 'first_name')).toMatchObject({ builtin: true, enabled: true });

    const created = await call(app, 'POST', '/api/v1/idp-attributes', {
      token: ws.apiKey,
      body: { key: 'department', name: 'Department', claim: 'dept' },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ key: 'department', name: 'Department', builtin: false, enabled: true, claims: ['dept'] });
    expect((await call(app, 'POST', '/api/v1/idp-attributes', { token: ws.apiKey, body: { key: 'department', name: 'D' } })).status).toBe(
      409,
    );
    expect((await call(app, 'POST', '/api/v1/idp-attributes', { token: ws.apiKey, body: { key: 'email', name: 'E' } })).status).toBe(409);
    expect((await call(app, 'POST', '/api/v1/idp-attributes', { token: ws.apiKey, body: { key: 'Bad Key', name: 'E' } })).status).toBe(400);

    const off = await call(app, 'PATCH', '/api/v1/idp-attributes/first_name', { token: ws.apiKey, body: { enabled: false } });
    expect(off.body.data).toMatchObject({ key: 'first_name', builtin: true, enabled: false });
    const customOff = await call(app, 'PATCH', '/api/v1/idp-attributes/department', { token: ws.apiKey, body: { enabled: false } });
    expect(customOff.body.data.enabled).toBe(false);
    const after = await call(app, 'GET', '/api/v1/idp-attributes?per_page=100', { token: ws.apiKey });
    expect(after.body.data.find((a: { key: string }) => a.key === 'first_name').enabled).toBe(false);
    expect(after.body.meta.total).toBe(list.body.meta.total + 1);
    // Another workspace keeps its defaults.
    const theirs = await call(app, 'GET', '/api/v1/idp-attributes?per_page=100', { token: other.apiKey });
    expect(theirs.body.data.find((a: { key: string }) => a.key === 'first_name').enabled).toBe(true);
    expect((await call(app, 'PATCH', '/api/v1/idp-attributes/nope', { token: ws.apiKey, body: { enabled: true } })).status).toBe(404);
    expect((await call(app, 'PATCH', '/api/v1/idp-attributes/locale', { token: ws.apiKey, body: { enabled: 'yes' } })).status).toBe(400);
    // Nothing to change answers the attribute as it is (the no-op PATCH rule).
    const untouched = await call(app, 'PATCH', '/api/v1/idp-attributes/locale', { token: ws.apiKey, body: {} });
    expect([untouched.status, untouched.body.data?.key]).toEqual([200, 'locale']);

    // A key alone (claims are often camelCase); a rename alone keeps the switch as it was.
    const bare = await call(app, 'POST', '/api/v1/idp-attributes', { token: ws.apiKey, body: { key: 'employeeId' } });
    expect(bare.status).toBe(201);
    expect(bare.body.data).toEqual({ key: 'employeeId', name: 'employeeId', builtin: false, enabled: true, claims: ['employeeId'] });
    const renamed = await call(app, 'PATCH', '/api/v1/idp-attributes/department', { token: ws.apiKey, body: { name: 'Dept.' } });
    expect(renamed.body.data).toMatchObject({ key: 'department', name: 'Dept.', enabled: false });
    const builtinRenamed = await call(app, 'PATCH', '/api/v1/idp-attributes/locale', { token: ws.apiKey, body: { name: 'Language' } });
    expect(builtinRenamed.body.data).toMatchObject({ key: 'locale', name: 'Language', enabled: false });

    // The first switches of a built-in, sent at once (a double click), all succeed on the one row.
    const together = await Promise.all(
      Array.from({ length: 6 }, () =>
        call(app, 'PATCH', '/api/v1/idp-attributes/phone_number', { token: ws.apiKey, body: { enabled: true } }),
      ),
    );
    expect(together.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const phone = await call(app, 'GET', '/api/v1/idp-attributes?per_page=100', { token: ws.apiKey });
    expect(phone.body.data.filter((a: { key: string }) => a.key === 'phone_number')).toMatchObject([{ enabled: true }]);

    // Keys that name what every JavaScript object has are keys like any other.
    for (const key of ['toString', 'constructor', 'valueOf']) {
      const unknown = await call(app, 'PATCH', `/api/v1/idp-attributes/${key}`, { token: ws.apiKey, body: { enabled: true } });
      expect([unknown.status, unknown.body.error?.code], key).toEqual([404, 'NOT_FOUND']);
    }
    const custom = await call(app, 'POST', '/api/v1/idp-attributes', { token: ws.apiKey, body: { key: 'valueOf', claim: 'value_of' } });
    expect(custom.status).toBe(201);
    expect(custom.body.data).toEqual({ key: 'valueOf', name: 'valueOf', builtin: false, enabled: true, claims: ['value_of'] });
    const switched = await call(app, 'PATCH', '/api/v1/idp-attributes/valueOf', { token: ws.apiKey, body: { enabled: false } });
    expect(switched.body.data).toMatchObject({ key: 'valueOf', builtin: false, enabled: false, claims: ['value_of'] });
  });

  it("keeps attribute keys unique whatever their case: a built-in's name or a taken key in another case is 409", async () => {
    const post = (body: object) => call(app, 'POST', '/api/v1/idp-attributes', { token: ws.apiKey, body });
    for (const key of ['Email', 'EMAIL', 'First_Name', 'Groups']) {
      const res = await post({ key });
      expect([res.status, res.body.error?.code, res.body.error?.details], key).toEqual([
        409,
        'CONFLICT',
        [{ path: 'key', message: 'is already taken' }],
      ]);
    }
    const dept = await post({ key: 'dept' });
    expect(dept.status).toBe(201);
    for (const key of ['Dept', 'DEPT']) expect((await post({ key })).status, key).toBe(409);
    // The spelling is kept (claims are often camelCase), and a claim in another case is reached by its own key.
    const camel = await post({ key: 'costCenter' });
    expect(camel.body.data).toMatchObject({ key: 'costCenter', claims: ['costCenter'] });
    expect((await post({ key: 'costcenter' })).status).toBe(409);
    const capitalEmail = await post({ key: 'work_email', claim: 'Email' });
    expect([capitalEmail.status, capitalEmail.body.data?.claims]).toEqual([201, ['Email']]);
    // Sent together, one of two spellings wins.
    const together = await Promise.all(['Region', 'region', 'REGION'].map((key) => post({ key })));
    expect(together.map((res) => res.status).sort()).toEqual([201, 409, 409]);
    const keys = (await call(app, 'GET', '/api/v1/idp-attributes?per_page=100', { token: ws.apiKey })).body.data.map(
      (a: { key: string }) => a.key,
    );
    expect(keys.filter((key: string) => key.toLowerCase() === 'region')).toHaveLength(1);
    expect(keys.filter((key: string) => key.toLowerCase() === 'email')).toEqual(['email']);
  });
});
