import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call, graphql } from '../../../test/helpers/http.ts';
import { MailSink } from '../../../test/helpers/mail-sink.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { newId } from '../../core/ids.ts';
import { Migration20261201110000_deny_orphaned_requests } from '../../db/migrations/Migration20261201110000_deny_orphaned_requests.ts';

const PASSWORD = 'governance passphrase';

interface Person {
  id: string;
  email: string;
  token: string;
}

describe('entitlements and access requests', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const mail = new MailSink();
  const roleIds: Record<string, string> = {};
  let owner: Person;
  let admin: Person;
  let viewer: Person;
  let groupId: string;

  async function person(label: string, role?: string): Promise<Person> {
    const email = uniqueEmail(label);
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    if (role)
      await call(app, 'POST', '/api/v1/roles/assign', {
        token: ws.apiKey,
        body: { user_id: created.body.data.id, role_id: roleIds[role] },
      });
    return { id: created.body.data.id, email, token: (await signIn(app, ws.id, email, PASSWORD)).accessToken };
  }

  const ask = (who: Person | string, body: object) =>
    call(app, 'POST', '/api/v1/iga/requests', { token: typeof who === 'string' ? who : who.token, body });
  const decide = (id: string, verb: 'approve' | 'deny', body: object, token = admin.token) =>
    call(app, 'POST', `/api/v1/iga/requests/${id}/${verb}`, { token, body });

  async function events(type: string) {
    return app.deps.orm.em
      .getConnection()
      .execute<{ payload: any }[]>('select payload from events where workspace_id = ? and type = ? order by created_at, id', [ws.id, type]);
  }

  async function rolesOf(userId: string) {
    const res = await call(app, 'GET', `/api/v1/users/${userId}/roles`, { token: ws.apiKey });
    return res.body.data.map((r: { id: string; expires_at: string | null }) => ({ id: r.id, expires_at: r.expires_at }));
  }

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start() });
    ws = await createWorkspace(app, 'Governed');
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    for (const r of roles.body.data) roleIds[r.key] = r.id;
    roleIds.billing = (
      await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'Billing', key: 'billing', permissions: ['users:read'] } })
    ).body.data.id;
    groupId = (await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Finance' } })).body.data.id;
    owner = { id: ws.owner.id, email: ws.owner.email, token: (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken };
    admin = await person('admin', 'admin');
    viewer = await person('viewer', 'viewer');
  });
  afterAll(async () => {
    await app.close();
    await mail.stop();
  });

  it('lists entitlements (roles, then groups) with who holds them', async () => {
    const member = await person('holder');
    await call(app, 'POST', `/api/v1/groups/${groupId}/members`, { token: ws.apiKey, body: { user_id: member.id } });
    const res = await call(app, 'GET', '/api/v1/iga/entitlements?per_page=100', { token: viewer.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { type: string; name: string }) => `${e.type}:${e.name}`)).toEqual([
      'role:owner',
      'role:admin',
      'role:viewer',
      'role:member',
      'role:Billing',
      'group:Finance',
    ]);
    expect(res.body.meta.total).toBe(6);
    const byName = Object.fromEntries(res.body.data.map((e: { name: string }) => [e.name, e]));
    expect(byName.owner).toMatchObject({
      id: roleIds.owner,
      key: 'owner',
      holder_count: 1,
      holders: [{ user_id: owner.id, email: owner.email }],
    });
    expect(byName.admin.holders.map((h: { user_id: string }) => h.user_id)).toEqual([admin.id]);
    expect(byName.Finance).toMatchObject({
      id: groupId,
      type: 'group',
      key: null,
      holder_count: 1,
      holders: [{ user_id: member.id, expires_at: null }],
    });
    expect(byName.member.holder_count).toBe(3);

    const groups = await call(app, 'GET', '/api/v1/iga/entitlements?type=group', { token: ws.apiKey });
    expect(groups.body.data.map((e: { id: string }) => e.id)).toEqual([groupId]);
    const second = await call(app, 'GET', '/api/v1/iga/entitlements?per_page=4&page=2', { token: ws.apiKey });
    expect(second.body).toMatchObject({ meta: { total: 6, page: 2 } });
    expect(second.body.data).toHaveLength(2);
    await call(app, 'DELETE', `/api/v1/groups/${groupId}/members/${member.id}`, { token: ws.apiKey });
  });

  it('a user asks; admins are emailed; an admin approves with an expiry: granted in the same transaction; twice is 409', async () => {
    const requester = await person('asker');
    const created = await ask(requester, { entitlement_id: roleIds.billing, justification: 'Quarter close' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      requester: { id: requester.id, email: requester.email },
      entitlement: { type: 'role', id: roleIds.billing, name: 'Billing' },
      justification: 'Quarter close',
      status: 'pending',
      decided_at: null,
      decided_by: null,
    });
    const id = created.body.data.id;
    expect((await ask(requester, { entitlement_id: roleIds.billing, justification: 'again' })).status).toBe(409);
    for (const approver of [owner.email, admin.email]) expect((await mail.waitFor(approver)).raw).toContain(id);
    expect(mail.to(viewer.email)).toHaveLength(0);
    expect((await events('access_request.created')).at(-1)?.payload).toMatchObject({ id, status: 'pending' });

    const pending = await call(app, 'GET', '/api/v1/iga/requests?status=pending', { token: viewer.token });
    expect(pending.body.data.map((r: { id: string }) => r.id)).toContain(id);
    expect((await call(app, 'GET', `/api/v1/iga/requests/${id}`, { token: viewer.token })).body.data.status).toBe('pending');

    const expiresAt = new Date(app.clock.now().getTime() + 7 * 86_400_000).toISOString();
    const adminMails = mail.to(admin.email).length;
    const approved = await decide(id, 'approve', { expires_at: expiresAt, comment: 'for the close' });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({
      status: 'approved',
      decided_by: { type: 'user', id: admin.id },
      decision_reason: 'for the close',
      expires_at: expiresAt,
    });
    expect(await rolesOf(requester.id)).toContainEqual({ id: roleIds.billing, expires_at: expiresAt });
    // The grant is live at once: the requester's own token now reads users (the Billing role's permission).
    expect((await call(app, 'GET', '/api/v1/users', { token: requester.token })).status).toBe(200);

    const again = await decide(id, 'approve', {});
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await decide(id, 'deny', { reason: 'changed my mind' })).status).toBe(409);

    const approvedEvent = (await events('access_request.approved')).at(-1)?.payload;
    expect(approvedEvent).toMatchObject({ id, status: 'approved', requester: { id: requester.id }, expires_at: expiresAt });
    expect((await mail.waitFor(requester.email)).raw).toMatch(/approved/);
    expect((await mail.waitFor(admin.email, adminMails)).raw).toMatch(/Access to role Billing approved/);

    const audit = await call(app, 'GET', `/api/v1/audit/events/?target_id=${id}&outcome=success&per_page=10`, { token: ws.apiKey });
    expect(audit.body.data.map((e: { event_type: string }) => e.event_type).sort()).toEqual([
      'access_request.approve',
      'access_request.create',
    ]);
    const assigned = await call(app, 'GET', `/api/v1/audit/events/?event_type=role.assign&target_id=${requester.id}`, { token: ws.apiKey });
    expect(assigned.body.data[0].actor).toEqual({ type: 'user', id: admin.id });
  });

  it("takes a role's key for entitlement_id, as roles/assign does; the request names the role by its id", async () => {
    const keyed = await person('keyed');
    const adminMails = mail.to(admin.email).length;
    const res = await ask(keyed, { entitlement_id: 'billing', justification: 'By key' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.entitlement).toMatchObject({ type: 'role', id: roleIds.billing });
    // Its reviewers' email, awaited here so that a later test counting the admin's mail does not take it for its own.
    expect((await mail.waitFor(admin.email, adminMails)).raw).toContain(res.body.data.id);
    // The same role by its id is the same pending request: 409, not a second one.
    expect((await ask(keyed, { entitlement_id: roleIds.billing, justification: 'By id' })).status).toBe(409);
    expect((await ask(keyed, { entitlement_id: 'no-such-role', justification: 'x' })).status).toBe(404);
  });

  it('takes a request without a justification (null everywhere it shows), or with `reason` for it; both at once is 400', async () => {
    const terse = await person('terse');
    const adminMails = mail.to(admin.email).length;
    const bare = await ask(terse, { entitlement_id: roleIds.billing });
    expect(bare.status).toBe(201);
    expect(bare.body.data).toMatchObject({ status: 'pending', justification: null });
    const { id } = bare.body.data;
    expect((await mail.waitFor(admin.email, adminMails)).raw).toMatch(new RegExp(`Their reason: none given[\\s\\S]*${id}`));
    // What a reviewer reads: by id, in the list, over GraphQL; the audit row of the creation.
    expect((await call(app, 'GET', `/api/v1/iga/requests/${id}`, { token: viewer.token })).body.data.justification).toBeNull();
    const listed = await call(app, 'GET', `/api/v1/iga/requests?requester_id=${terse.id}`, { token: viewer.token });
    expect(listed.body.data).toEqual([expect.objectContaining({ id, justification: null })]);
    const overGraphql = await graphql(
      app,
      '{ accessRequests(status: pending, perPage: 100) { data { id justification } } }',
      {},
      viewer.token,
    );
    expect(overGraphql.body.errors).toBeUndefined();
    expect(overGraphql.body.data.accessRequests.data).toContainEqual({ id, justification: null });
    const audit = await call(app, 'GET', `/api/v1/audit/events/?target_id=${id}`, { token: ws.apiKey });
    expect(audit.body.data.map((e: { event_type: string; outcome: string }) => [e.event_type, e.outcome])).toEqual([
      ['access_request.create', 'success'],
    ]);
    const approved = await decide(id, 'approve', {});
    expect(approved.body.data).toMatchObject({ status: 'approved', justification: null });

    const reasoned = await ask(terse, { entitlement_id: groupId, reason: 'Month-end reports' });
    expect(reasoned.status).toBe(201);
    expect(reasoned.body.data).toMatchObject({ justification: 'Month-end reports' });
    expect(reasoned.body.data).not.toHaveProperty('reason');
    await decide(reasoned.body.data.id, 'deny', {});
    for (const body of [{ reason: '  ' }, { justification: '' }]) {
      expect((await ask(terse, { entitlement_id: groupId, ...body })).status, JSON.stringify(body)).toBe(400);
    }
    const both = await ask(terse, { entitlement_id: groupId, justification: 'One', reason: 'Two' });
    expect([both.status, both.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(both.body.error.details).toEqual([{ path: 'reason', message: 'send justification or reason, not both' }]);
  });

  it('decides with no body, or with reason or comment on either decision', async () => {
    const quiet = await person('quiet');
    const first = (await ask(quiet, { entitlement_id: groupId, justification: 'First' })).body.data.id;
    const bare = await call(app, 'POST', `/api/v1/iga/requests/${first}/deny`, { token: ws.apiKey });
    expect(bare.status).toBe(200);
    expect(bare.body.data).toMatchObject({ status: 'denied', decision_reason: null });
    const second = (await ask(quiet, { entitlement_id: groupId, justification: 'Second' })).body.data.id;
    const approved = await decide(second, 'approve', { reason: 'Needed for the audit' }, ws.apiKey);
    expect(approved.body.data).toMatchObject({ status: 'approved', decision_reason: 'Needed for the audit' });
  });

  it('refuses a reason and a comment that differ (they are one note), on either decision; equal ones pass', async () => {
    const torn = await person('torn');
    const { id } = (await ask(torn, { entitlement_id: groupId, justification: 'Both' })).body.data;
    for (const verb of ['deny', 'approve'] as const) {
      const both = await decide(id, verb, { reason: 'Not now', comment: 'Maybe later' });
      expect([both.status, both.body.error.code, both.body.error.details]).toEqual([
        400,
        'BAD_REQUEST',
        [{ path: 'comment', message: 'send reason or comment, not both' }],
      ]);
    }
    expect((await call(app, 'GET', `/api/v1/iga/requests/${id}`, { token: ws.apiKey })).body.data.status).toBe('pending');
    const same = await decide(id, 'deny', { reason: 'Not now', comment: 'Not now' });
    expect(same.body.data).toMatchObject({ status: 'denied', decision_reason: 'Not now' });
  });

  it('denies with a reason; nothing is granted; deciding again is 409', async () => {
    const requester = await person('denied');
    const { id } = (await ask(requester, { entitlement_id: groupId, justification: 'Want to see the books' })).body.data;
    expect((await decide(id, 'deny', { reason: '' })).status).toBe(400);
    expect((await decide(id, 'deny', { note: 'unknown field' })).status).toBe(400);
    const denied = await decide(id, 'deny', { reason: 'Not on the finance team' }, ws.apiKey);
    expect(denied.body.data).toMatchObject({
      status: 'denied',
      decision_reason: 'Not on the finance team',
      decided_by: { type: 'api_key' },
    });
    const members = await call(app, 'GET', `/api/v1/iga/entitlements?type=group`, { token: ws.apiKey });
    expect(members.body.data[0].holders.map((h: { user_id: string }) => h.user_id)).not.toContain(requester.id);
    expect((await decide(id, 'deny', { reason: 'twice' })).status).toBe(409);
    expect((await decide(id, 'approve', {})).status).toBe(409);
    expect((await events('access_request.denied')).at(-1)?.payload).toMatchObject({ id, reason: 'Not on the finance team' });
    expect((await mail.waitFor(requester.email)).raw).toContain('Not on the finance team');
    const list = await call(app, 'GET', `/api/v1/iga/requests?status=denied&requester_id=${requester.id}`, { token: ws.apiKey });
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([id]);
    // A new request after a denial is fine.
    expect((await ask(requester, { entitlement_id: groupId, justification: 'Joined finance' })).status).toBe(201);
  });

  it('approving a group request adds the membership', async () => {
    const requester = await person('joiner');
    const { id } = (await ask(requester, { entitlement_id: groupId, justification: 'New hire' })).body.data;
    expect((await decide(id, 'approve', { expires_at: new Date(app.clock.now().getTime() + 86_400_000).toISOString() })).status).toBe(400);
    expect((await decide(id, 'approve', {})).body.data.status).toBe('approved');
    const group = await call(app, 'GET', '/api/v1/iga/entitlements?type=group', { token: ws.apiKey });
    expect(group.body.data[0].holders.map((h: { user_id: string }) => h.user_id)).toContain(requester.id);
    expect((await ask(requester, { entitlement_id: groupId, justification: 'again' })).status).toBe(409);
  });

  it('one of two racing decisions wins, the other is 409', async () => {
    const requester = await person('raced');
    const { id } = (await ask(requester, { entitlement_id: roleIds.billing, justification: 'race' })).body.data;
    const results = await Promise.all([decide(id, 'approve', {}), decide(id, 'deny', { reason: 'no' }, ws.apiKey)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const final = (await call(app, 'GET', `/api/v1/iga/requests/${id}`, { token: ws.apiKey })).body.data.status;
    const holds = (await rolesOf(requester.id)).some((r: { id: string }) => r.id === roleIds.billing);
    expect(holds).toBe(final === 'approved');
  });

  it('keeps the rules: no self-approval, owner granted only by owners, unknown entitlements 404, API keys cannot ask', async () => {
    const own = await ask(admin, { entitlement_id: roleIds.billing, justification: 'mine' });
    expect(own.status).toBe(201);
    const self = await decide(own.body.data.id, 'approve', {}, admin.token);
    expect([self.status, self.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await decide(own.body.data.id, 'approve', {}, owner.token)).status).toBe(200);

    const climber = await person('climber');
    const ownerRequest = (await ask(climber, { entitlement_id: roleIds.owner, justification: 'promote me' })).body.data.id;
    expect((await decide(ownerRequest, 'approve', {}, admin.token)).status).toBe(403);
    expect((await call(app, 'GET', `/api/v1/iga/requests/${ownerRequest}`, { token: ws.apiKey })).body.data.status).toBe('pending');
    expect((await decide(ownerRequest, 'deny', { reason: 'no' }, admin.token)).status).toBe(200);

    expect((await ask(climber, { entitlement_id: 'rol_00000000000000000000000000', justification: 'x' })).status).toBe(404);
    expect((await ask(climber, { entitlement_id: 'usr_00000000000000000000000000', justification: 'x' })).status).toBe(404);
    // Too long names nothing either: 404 as an unknown id (meta.bodyIds), not 400.
    expect((await ask(climber, { entitlement_id: `rol_${'0'.repeat(300)}`, justification: 'x' })).status).toBe(404);
    expect((await ask(climber, { entitlement_id: roleIds.member, justification: 'held already' })).status).toBe(409);
    expect((await ask(climber, { justification: 'for what?' })).status).toBe(400);
    expect((await ask(climber, { entitlement_id: roleIds.billing, justification: '  ' })).status).toBe(400);
    const byKey = await ask(ws.apiKey, { entitlement_id: roleIds.billing, justification: 'x' });
    expect([byKey.status, byKey.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await ask('', { entitlement_id: roleIds.billing, justification: 'x' })).status).toBe(401);
    for (const id of ['req_00000000000000000000000000', 'nope']) {
      expect((await decide(id, 'approve', {})).status).toBe(404);
      expect((await call(app, 'GET', `/api/v1/iga/requests/${id}`, { token: ws.apiKey })).status).toBe(404);
    }
  });

  it('records every refused request as a failed access_request.create, with the caller and the code', async () => {
    const asker = await person('refused');
    const pending = await ask(asker, { entitlement_id: roleIds.billing, justification: 'first' });
    expect(pending.status).toBe(201);
    const refusals = [
      [await ask(asker, { entitlement_id: roleIds.billing, justification: 'again' }), 409, 'user'],
      [await ask(asker, { entitlement_id: roleIds.member, justification: 'held already' }), 409, 'user'],
      [await ask(asker, { entitlement_id: 'rol_00000000000000000000000000', justification: 'x' }), 404, 'user'],
      [await ask(asker, { justification: 'for what?' }), 400, 'user'],
      [await ask(ws.apiKey, { entitlement_id: roleIds.billing, justification: 'x' }), 403, 'api_key'],
    ] as const;
    const failures = await call(app, 'GET', '/api/v1/audit/events/?event_type=access_request.create&outcome=failure&per_page=100', {
      token: ws.apiKey,
    });
    for (const [res, status, actor] of refusals) {
      expect(res.status).toBe(status);
      const row = failures.body.data.find((e: { request_id: string }) => e.request_id === res.headers.get('x-request-id'));
      expect(row, `${status}`).toMatchObject({
        actor: { type: actor, ...(actor === 'user' ? { id: asker.id } : {}) },
        target: null,
        details: { reason: res.body.error.code, status },
      });
    }
  });

  it('lets viewers read requests and entitlements but not decide; members neither (beyond their own requests)', async () => {
    const requester = await person('watched');
    const { id } = (await ask(requester, { entitlement_id: roleIds.billing, justification: 'read me' })).body.data;
    expect((await call(app, 'GET', '/api/v1/iga/requests', { token: viewer.token })).status).toBe(200);
    expect((await decide(id, 'approve', {}, viewer.token)).status).toBe(403);
    expect((await decide(id, 'deny', { reason: 'x' }, viewer.token)).status).toBe(403);
    expect((await call(app, 'GET', '/api/v1/iga/entitlements', { token: requester.token })).status).toBe(403);
    // Their own request they may read (below); not the entitlements.
    const filtered = await call(app, 'GET', `/api/v1/iga/requests?requester_id=${requester.id}`, { token: ws.apiKey });
    expect(filtered.body.data.map((r: { id: string }) => r.id)).toEqual([id]);
    const byEntitlement = await call(app, 'GET', `/api/v1/iga/requests?entitlement_id=${groupId}&per_page=100`, { token: ws.apiKey });
    for (const r of byEntitlement.body.data) expect(r.entitlement.id).toBe(groupId);
    expect((await call(app, 'GET', '/api/v1/iga/requests?status=maybe', { token: ws.apiKey })).status).toBe(400);
  });

  it('lets a member list their own requests, and nobody else’s; iga:read lists everyone’s', async () => {
    const [first, second] = [await person('follower'), await person('bystander')];
    const mine = [
      (await ask(first, { entitlement_id: roleIds.billing, justification: 'mine, role' })).body.data.id,
      (await ask(first, { entitlement_id: groupId, justification: 'mine, group' })).body.data.id,
    ];
    const theirs = (await ask(second, { entitlement_id: roleIds.billing, justification: 'theirs' })).body.data.id;
    await decide(mine[1], 'deny', { reason: 'Not on the finance team' });
    const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((r) => r.id).sort();
    const list = (query: string, token = first.token) => call(app, 'GET', `/api/v1/iga/requests${query}`, { token });

    const own = await list('?per_page=100');
    expect(own.status).toBe(200);
    expect(ids(own)).toEqual([...mine].sort());
    expect(own.body.meta.total).toBe(2);
    expect(own.body.data.find((r: { id: string }) => r.id === mine[1])).toMatchObject({
      status: 'denied',
      decision_reason: 'Not on the finance team',
    });
    expect(ids(await list('?status=pending'))).toEqual([mine[0]]);
    // Naming someone else narrows to nothing: the caller's own requests stay the limit.
    const asked = await list(`?requester_id=${second.id}`);
    expect([asked.status, asked.body.data, asked.body.meta.total]).toEqual([200, [], 0]);
    expect(ids(await list('', second.token))).toEqual([theirs]);
    const all = ids(await list(`?per_page=100&entitlement_id=${roleIds.billing}`, viewer.token));
    expect(all).toEqual(expect.arrayContaining([mine[0], theirs]));
    // By id likewise: their own, not another's (404, as for an id that names nothing); a viewer reads any.
    const read = (id: string, token = first.token) => call(app, 'GET', `/api/v1/iga/requests/${id}`, { token });
    expect((await read(mine[0])).body.data).toMatchObject({ id: mine[0], status: 'pending' });
    const other = await read(theirs);
    expect([other.status, other.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await read(theirs, viewer.token)).body.data.id).toBe(theirs);
  });

  it('denies the pending requests a deletion leaves unanswerable: of a deleted requester, for a deleted role or group', async () => {
    const doomedRole = (await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'Doomed', permissions: [] } })).body.data
      .id;
    const doomedGroup = (await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Doomed crew' } })).body.data.id;
    const asker = await person('orphan-asker');
    const leaver = await person('orphan-leaver');
    const forRole = (await ask(asker, { entitlement_id: doomedRole })).body.data.id;
    const forGroup = (await ask(asker, { entitlement_id: doomedGroup })).body.data.id;
    const ofLeaver = (await ask(leaver, { entitlement_id: roleIds.billing })).body.data.id;
    const untouched = (await ask(asker, { entitlement_id: roleIds.billing })).body.data.id;

    expect((await call(app, 'DELETE', `/api/v1/roles/${doomedRole}`, { token: admin.token })).status).toBe(200);
    expect((await call(app, 'DELETE', `/api/v1/groups/${doomedGroup}`, { token: admin.token })).status).toBe(200);
    expect((await call(app, 'DELETE', `/api/v1/users/${leaver.id}`, { token: admin.token })).status).toBe(200);

    const expected: [string, string][] = [
      [forRole, 'The role was deleted'],
      [forGroup, 'The group was deleted'],
      [ofLeaver, "The requester's account was deleted"],
    ];
    for (const [id, reason] of expected) {
      const request = await call(app, 'GET', `/api/v1/iga/requests/${id}`, { token: ws.apiKey });
      expect(request.body.data, reason).toMatchObject({
        status: 'denied',
        decision_reason: reason,
        decided_by: { type: 'user', id: admin.id },
      });
      const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=access_request.deny&target_id=${id}`, { token: ws.apiKey });
      expect(audit.body.data.map((e: { outcome: string }) => e.outcome)).toEqual(['success']);
      expect((await events('access_request.denied')).map((e) => e.payload).find((p) => p.id === id)).toMatchObject({ reason });
    }
    expect((await call(app, 'GET', `/api/v1/iga/requests/${untouched}`, { token: ws.apiKey })).body.data.status).toBe('pending');
    const pending = await call(app, 'GET', '/api/v1/iga/requests?status=pending&per_page=100', { token: ws.apiKey });
    const pendingIds: string[] = pending.body.data.map((r: { id: string }) => r.id);
    expect(pendingIds.filter((id) => [forRole, forGroup, ofLeaver].includes(id))).toEqual([]);
    expect(pendingIds).toContain(untouched);
  });
  it('lets the requester cancel their own pending request, once; nobody else (404 without iga:read, else 403)', async () => {
    const [asker, stranger] = [await person('canceller'), await person('stranger')];
    const { id } = (await ask(asker, { entitlement_id: roleIds.billing, justification: 'maybe' })).body.data;
    const cancel = (token: string, body: object = {}) => call(app, 'POST', `/api/v1/iga/requests/${id}/cancel`, { token, body });
    const refusals = [
      [await cancel(stranger.token), 404, stranger.id],
      [await cancel(viewer.token), 403, viewer.id],
      [await cancel(admin.token), 403, admin.id],
      [await cancel(ws.apiKey), 403, null],
      [await cancel(asker.token, { reason: 'one', comment: 'two' }), 400, asker.id],
    ] as const;
    const failures = await call(app, 'GET', '/api/v1/audit/events/?event_type=access_request.cancel&outcome=failure&per_page=100', {
      token: ws.apiKey,
    });
    for (const [res, status, actorId] of refusals) {
      expect(res.status).toBe(status);
      const row = failures.body.data.find((e: { request_id: string }) => e.request_id === res.headers.get('x-request-id'));
      expect(row, `${status}`).toMatchObject({ details: { reason: res.body.error.code, status } });
      if (actorId) expect(row.actor.id).toBe(actorId);
    }
    expect((await call(app, 'GET', `/api/v1/iga/requests/${id}`, { token: ws.apiKey })).body.data.status).toBe('pending');

    const cancelled = await cancel(asker.token, { reason: 'Not needed after all' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({
      id,
      status: 'cancelled',
      decided_by: { type: 'user', id: asker.id },
      decision_reason: 'Not needed after all',
      expires_at: null,
    });
    expect(cancelled.body.data.decided_at).not.toBeNull();
    const again = await cancel(asker.token);
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await decide(id, 'approve', {})).status).toBe(409);
    expect(await rolesOf(asker.id)).not.toContainEqual(expect.objectContaining({ id: roleIds.billing }));

    const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=access_request.cancel&target_id=${id}&outcome=success`, {
      token: ws.apiKey,
    });
    expect(audit.body.data.map((e: { outcome: string; actor: object }) => [e.outcome, e.actor])).toEqual([
      ['success', { type: 'user', id: asker.id }],
    ]);
    expect((await events('access_request.cancelled')).map((e) => e.payload).find((p) => p.id === id)).toMatchObject({
      status: 'cancelled',
      reason: 'Not needed after all',
      decided_by: { type: 'user', id: asker.id },
    });
    const types = await call(app, 'GET', '/api/v1/webhooks/event-types?per_page=100', { token: ws.apiKey });
    expect(types.body.data.map((t: { type: string }) => t.type)).toContain('access_request.cancelled');
    const listed = await call(app, 'GET', '/api/v1/iga/requests?status=cancelled', { token: asker.token });
    expect(listed.body.data.map((r: { id: string }) => r.id)).toEqual([id]);
    // Asking again is a new request; a decided one cannot be cancelled.
    const renewed = (await ask(asker, { entitlement_id: roleIds.billing })).body.data.id;
    await decide(renewed, 'deny', {});
    const late = await call(app, 'POST', `/api/v1/iga/requests/${renewed}/cancel`, { token: asker.token });
    expect([late.status, late.body.error.code]).toEqual([409, 'CONFLICT']);
  });
  it('denies, once, the requests orphaned before deletions denied them (a migration), by the system', async () => {
    const connection = app.deps.orm.em.getConnection();
    const asker = await person('old-orphans');
    const kept = (await ask(asker, { entitlement_id: roleIds.billing })).body.data.id;
    // Rows as a deletion left them before it denied what it orphaned.
    const orphan = async (requesterId: string, type: 'role' | 'group', entitlementId: string) => {
      const id = newId('req');
      await connection.execute(
        `insert into access_requests (id, workspace_id, requester_id, requester_email, entitlement_type, entitlement_id, entitlement_name,
                                      justification, status, created_at)
         values (?, ?, ?, ?, ?, ?, ?, null, 'pending', now())`,
        [id, ws.id, requesterId, asker.email, type, entitlementId, 'Gone'],
      );
      return id;
    };
    const expected: [string, string][] = [
      [await orphan(newId('usr'), 'role', roleIds.billing as string), "The requester's account was deleted"],
      [await orphan(asker.id, 'role', newId('rol')), 'The role was deleted'],
      [await orphan(asker.id, 'group', newId('grp')), 'The group was deleted'],
    ];
    const migrate = async () => {
      const migration = new Migration20261201110000_deny_orphaned_requests(app.deps.orm.em.getDriver(), app.deps.orm.config);
      await migration.up();
      for (const query of migration.getQueries()) await connection.execute(query as string);
    };
    await migrate();
    for (const [id, reason] of expected) {
      const request = await call(app, 'GET', `/api/v1/iga/requests/${id}`, { token: ws.apiKey });
      expect(request.body.data, reason).toMatchObject({
        status: 'denied',
        decision_reason: reason,
        decided_by: { type: 'system', id: null },
      });
      const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=access_request.deny&target_id=${id}`, { token: ws.apiKey });
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0]).toMatchObject({ outcome: 'success', actor: { type: 'system', id: null }, details: { orphaned: true } });
      expect((await call(app, 'GET', `/api/v1/audit/events/${audit.body.data[0].id}`, { token: ws.apiKey })).status).toBe(200);
      expect((await events('access_request.denied')).filter((e) => e.payload.id === id).map((e) => e.payload)).toEqual([
        expect.objectContaining({ status: 'denied', reason, decided_by: { type: 'system', id: null } }),
      ]);
    }
    expect((await call(app, 'GET', `/api/v1/iga/requests/${kept}`, { token: ws.apiKey })).body.data.status).toBe('pending');
    // A second run finds nothing left to deny.
    const before = (await events('access_request.denied')).length;
    await migrate();
    expect((await events('access_request.denied')).length).toBe(before);
  });
  it('takes a request to extend a role held until a date; one held for good is 409', async () => {
    const holder = await person('extender');
    const soon = new Date(app.clock.now().getTime() + 86_400_000).toISOString();
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: holder.id, role_id: roleIds.billing, expires_at: soon },
    });
    const asked = await ask(holder, { entitlement_id: roleIds.billing, justification: 'Another month' });
    expect(asked.status).toBe(201);
    const later = new Date(app.clock.now().getTime() + 30 * 86_400_000).toISOString();
    expect((await decide(asked.body.data.id, 'approve', { expires_at: later })).status).toBe(200);
    expect(await rolesOf(holder.id)).toContainEqual({ id: roleIds.billing, expires_at: later });
    // A shorter approval never cuts a grant short; a grant for good needs no request.
    const again = (await ask(holder, { entitlement_id: roleIds.billing })).body.data.id;
    expect((await decide(again, 'approve', { expires_at: soon })).status).toBe(200);
    expect(await rolesOf(holder.id)).toContainEqual({ id: roleIds.billing, expires_at: later });
    const forGood = (await ask(holder, { entitlement_id: roleIds.billing })).body.data.id;
    expect((await decide(forGood, 'approve', {})).status).toBe(200);
    expect(await rolesOf(holder.id)).toContainEqual({ id: roleIds.billing, expires_at: null });
    const held = await ask(holder, { entitlement_id: roleIds.billing });
    expect([held.status, held.body.error.code]).toEqual([409, 'CONFLICT']);
  });
});
