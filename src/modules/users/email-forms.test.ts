import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migration20261201000000_canonical_emails } from '../../db/migrations/Migration20261201000000_canonical_emails.ts';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, someIp } from '../../../test/helpers/auth.ts';
import { call, graphql } from '../../../test/helpers/http.ts';
import { MailSink, queuedTo } from '../../../test/helpers/mail-sink.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';

const PASSWORD = 'a sturdy passphrase';

/** Every path that takes an email address takes it in any of its spellings, and keeps one. */
describe('email addresses: one stored form, whatever the spelling', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const mail = new MailSink();

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start() });
    ws = await createWorkspace(app);
  });
  afterAll(async () => {
    await app.close();
    await mail.stop();
  });

  /** A fresh internationalised domain (`bücher-….example`) and its punycode. */
  function idnDomain() {
    const unicode = `bücher-${randomUUID().slice(0, 8)}.example`;
    return { unicode, ascii: new URL(`http://${unicode}`).hostname };
  }

  it('trims white space and takes an internationalised domain in either form, for create, sign-in and duplicates', async () => {
    const { unicode, ascii } = idnDomain();
    expect(ascii).toMatch(/^xn--/);
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: `  Alice@${unicode.toUpperCase()}.\t`, password: PASSWORD },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.email).toBe(`alice@${ascii}`);

    for (const spelling of [`alice@${ascii}`, `ALICE@${unicode}`, ` alice@${unicode} `, `Alice@${ascii.toUpperCase()}.`]) {
      const res = await login(app, ws.id, spelling, PASSWORD);
      expect([res.status, res.body.data?.user?.email], spelling).toEqual([200, `alice@${ascii}`]);
    }
    const again = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: `alice@${ascii}`, password: PASSWORD } });
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
    const invited = await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email: ` ALICE@${unicode}` } });
    expect([invited.status, invited.body.error.code]).toEqual([409, 'CONFLICT']);

    const found = await graphql(app, `{ users(q: "${ascii}") { data { email } meta { total } } }`, {}, ws.apiKey);
    expect(found.body.data.users).toEqual({ data: [{ email: `alice@${ascii}` }], meta: { total: 1 } });
  });

  it('sends one reset email per address per minute across its spellings, to the stored address', async () => {
    const { unicode, ascii } = idnDomain();
    const email = `bob@${ascii}`;
    expect((await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } })).status).toBe(201);
    const forgot = (spelling: string) =>
      call(app, 'POST', '/api/v1/auth/password/forgot', {
        headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() },
        body: { email: spelling },
      });
    // The mail sink, like a mail server, reads the recipient's domain back in its Unicode form.
    const received = `bob@${unicode}`;
    expect((await forgot(` Bob@${unicode.toUpperCase()} `)).status).toBe(200);
    await mail.waitFor(received);
    expect((await forgot(`BOB@${ascii}`)).status).toBe(200);
    expect((await forgot(`bob@${unicode}`)).status).toBe(200);
    expect(await queuedTo(app, email)).toBe(1);
    await app.deps.mailer.tick();
    expect(mail.to(received)).toHaveLength(1);
  });

  it('invites an internationalised address in its stored form, once', async () => {
    const { unicode, ascii } = idnDomain();
    const invited = await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email: `Carol@${unicode}` } });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    expect(invited.body.data.email).toBe(`carol@${ascii}`);
    await mail.waitFor(`carol@${unicode}`);
    const twice = await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email: `carol@${ascii}` } });
    expect([twice.status, twice.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('takes an organization domain in its internationalised form, as punycode, and keeps look-alikes apart', async () => {
    const { unicode, ascii } = idnDomain();
    const org = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Bücher', domains: [` ${unicode.toUpperCase()}. `] },
    });
    expect(org.status, JSON.stringify(org.body)).toBe(201);
    expect(org.body.data.domains).toEqual([ascii]);
    const same = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Copy', domains: [ascii] } });
    expect([same.status, same.body.error.code]).toEqual([409, 'CONFLICT']);
    // `exаmple.com` with a Cyrillic а is another name, shown as the punycode that says so.
    const lookalike = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Look-alike', domains: [`ex\u0430mple-${randomUUID().slice(0, 8)}.com`] },
    });
    expect(lookalike.status).toBe(201);
    expect(lookalike.body.data.domains[0]).toMatch(/^xn--/);
    for (const domain of ['ex%41mple.com', 'exa mple.com', 'bü_cher.example']) {
      const bad = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Bad', domains: [domain] } });
      expect([bad.status, bad.body.error.code], domain).toEqual([400, 'BAD_REQUEST']);
    }
  });

  it("rewrites the emails stored before in another form (a provider's Unicode domain), unless that would take another user's", async () => {
    const { unicode, ascii } = idnDomain();
    const make = async (email: string) => {
      const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const em = app.deps.orm.em.fork();
    // As social and SSO sign-ins stored them: lower-cased only.
    const dora = await make(`dora@${ascii}`);
    await em.execute('update users set email = ? where id = ?', [`dora@${unicode}.`, dora]);
    const taken = await make(`erin@${ascii}`);
    const twin = await make(`erin-twin@${ascii}`);
    await em.execute('update users set email = ? where id = ?', [`erin@${unicode}`, twin]);

    await new Migration20261201000000_canonical_emails(em.getDriver(), app.deps.orm.config).up();

    const emails = await em.execute<{ id: string; email: string }[]>('select id, email from users where id in (?, ?, ?)', [
      dora,
      taken,
      twin,
    ]);
    expect(Object.fromEntries(emails.map((r) => [r.id, r.email]))).toEqual({
      [dora]: `dora@${ascii}`,
      [taken]: `erin@${ascii}`,
      [twin]: `erin@${unicode}`,
    });
    expect((await login(app, ws.id, `Dora@${unicode}`, PASSWORD)).body.data?.user?.id).toBe(dora);
  });

  it('finds a user by an internationalised domain typed in Unicode, whole labels at least, as by its punycode', async () => {
    const { unicode, ascii } = idnDomain();
    const label = unicode.split('.')[0] as string;
    const bob = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: `bob@${unicode}`, password: PASSWORD } });
    expect(bob.status).toBe(201);
    // A name holds the label as typed: its matches are found in Unicode, beside the address's.
    const reader = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: `reader-${randomUUID().slice(0, 8)}@example.com`, name: `Leser von ${label}`, password: PASSWORD },
    });
    expect(reader.status).toBe(201);
    const search = async (q: string) => {
      const res = await call(app, 'GET', `/api/v1/users?${new URLSearchParams({ q })}`, { token: ws.apiKey });
      expect(res.status).toBe(200);
      return (res.body.data as { id: string }[]).map((user) => user.id).sort();
    };
    const both = [bob.body.data.id, reader.body.data.id].sort();
    expect(await search(`bob@${unicode}`)).toEqual([bob.body.data.id]);
    expect(await search(`BOB@${unicode.toUpperCase()}`)).toEqual([bob.body.data.id]);
    expect(await search(unicode)).toEqual([bob.body.data.id]);
    expect(await search(ascii)).toEqual([bob.body.data.id]);
    expect(await search(label)).toEqual(both);
    // A part of a label has no punycode of its own: only the name, which holds it as typed, matches.
    expect(await search(label.slice(1))).toEqual([reader.body.data.id]);
    const filtered = await call(app, 'GET', `/api/v1/users?${new URLSearchParams({ q: `bob@${unicode}`, status: 'active' })}`, {
      token: ws.apiKey,
    });
    expect(filtered.body.data.map((user: { id: string }) => user.id)).toEqual([bob.body.data.id]);
  });

  it('still refuses what is no address: inner spaces, a non-ASCII local part, zero-width and fullwidth letters', async () => {
    for (const email of ['al ice@example.com', 'josé@example.com', 'b\u200bob@example.com', 'ｂｏｂ@example.com', 'bob@', '@example.com']) {
      const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
      expect([res.status, res.body.error?.details?.[0]?.path], email).toEqual([400, 'email']);
    }
  });
});
