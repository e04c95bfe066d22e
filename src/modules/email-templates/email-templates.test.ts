import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn, someIp } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { decodeMail, MailSink, resetTokenIn } from '../../../test/helpers/mail-sink.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { checkTemplate, DEFAULT_TEMPLATES, TEMPLATE_KEYS } from '../email/templates.ts';

const PASSWORD = 'template test passphrase';

const RESET = {
  subject: '{{branding.name}}: your reset link ({{expires_minutes}} min)',
  html:
    '<h1>{{branding.name}}</h1>{{#branding.logo_url}}<img src="{{branding.logo_url}}" alt="">{{/branding.logo_url}}' +
    '<p><a href="{{link}}">Reset it</a> within {{expires_minutes}} minutes.</p>' +
    '{{^branding.support_email}}<p>No support address.</p>{{/branding.support_email}}',
  text: 'Hello from {{branding.name}}!\nReset: {{link}}\nValid {{expires_minutes}} minutes.\n',
};

describe('email templates', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const mail = new MailSink();

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start(), BASE_URL: 'https://id.example.test' });
    ws = await createWorkspace(app, 'Templates Co');
  });
  afterAll(async () => {
    await app.close();
    await mail.stop();
  });

  const put = (key: string, body: object, token = ws.apiKey) => call(app, 'PUT', `/api/v1/email-templates/${key}`, { token, body });

  async function newUser(workspace = ws) {
    const email = uniqueEmail('tpl');
    const res = await call(app, 'POST', '/api/v1/users', { token: workspace.apiKey, body: { email, password: PASSWORD } });
    expect(res.status).toBe(201);
    return email;
  }

  const forgot = (email: string, workspace = ws) =>
    call(app, 'POST', '/api/v1/auth/password/forgot', {
      headers: { 'x-tenant-id': workspace.id, 'x-forwarded-for': someIp() },
      body: { email },
    });

  it('lists every template with its current text, whether it is customized, and its variables', async () => {
    const res = await call(app, 'GET', '/api/v1/email-templates/', { token: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total: TEMPLATE_KEYS.length, page: 1, per_page: 20 });
    const reset = res.body.data.find((t: { key: string }) => t.key === 'password_reset');
    expect(reset).toMatchObject({ ...DEFAULT_TEMPLATES.password_reset, customized: false, updated_at: null });
    const names = reset.variables.map((v: { name: string }) => v.name);
    expect(names).toEqual(expect.arrayContaining(['link', 'workspace_name', 'expires_minutes', 'branding.name', 'branding.logo_url']));
    expect(res.body.data.map((t: { key: string }) => t.key)).toEqual(TEMPLATE_KEYS);
    expect(TEMPLATE_KEYS).toEqual(expect.arrayContaining(['password_reset', 'invitation']));

    const paged = await call(app, 'GET', '/api/v1/email-templates/?page=2&per_page=1', { token: ws.apiKey });
    expect(paged.body.data.map((t: { key: string }) => t.key)).toEqual([TEMPLATE_KEYS[1]]);
    expect(paged.body.meta.total).toBe(TEMPLATE_KEYS.length);
    expect((await call(app, 'GET', '/api/v1/email-templates/?per_page=101', { token: ws.apiKey })).status).toBe(400);
  });

  it('declares every variable the built-in templates use (they pass the same check as a workspace’s)', () => {
    for (const key of TEMPLATE_KEYS) expect(checkTemplate(key, DEFAULT_TEMPLATES[key]), key).toEqual([]);
  });

  it('is described at the spec’s exact path, trailing slash included', async () => {
    const doc = (await call(app, 'GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/v1/email-templates/'])).toEqual(['get']);
    expect(doc.paths['/api/v1/email-templates']).toBeUndefined();
    expect(Object.keys(doc.paths['/api/v1/email-templates/{key}'])).toEqual(['get', 'put', 'delete']);
  });

  it('updates a template: the answer, the list and the single read show it as customized', async () => {
    const res = await put('invitation', {
      subject: 'Join {{workspace_name}}',
      html: '<p>{{workspace_name}}: <a href="{{link}}">join</a></p>',
      text: 'Join: {{link}}',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ key: 'invitation', subject: 'Join {{workspace_name}}', customized: true });
    expect(res.body.data.updated_at).toBeTruthy();
    const one = await call(app, 'GET', '/api/v1/email-templates/invitation', { token: ws.apiKey });
    expect(one.body.data).toEqual(res.body.data);
    const list = await call(app, 'GET', '/api/v1/email-templates/', { token: ws.apiKey });
    expect(list.body.data.find((t: { key: string }) => t.key === 'invitation').customized).toBe(true);
  });

  it('sends the next invitation with the update, and the built-in one again after a reset (DELETE)', async () => {
    const email = uniqueEmail('invitee');
    expect((await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email } })).status).toBe(201);
    const first = decodeMail(await mail.waitFor(email));
    expect(first.subject).toBe('Join Templates Co');
    expect(first.text).toMatch(/^Join: https:\/\/id\.example\.test\/accept-invitation\?token=/);

    const reset = await call(app, 'DELETE', '/api/v1/email-templates/invitation', { token: ws.apiKey });
    expect(reset.status).toBe(200);
    expect(reset.body.data).toMatchObject({ ...DEFAULT_TEMPLATES.invitation, customized: false });
    const other = uniqueEmail('invitee');
    await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email: other } });
    expect(decodeMail(await mail.waitFor(other)).subject).toBe('You are invited to Templates Co');
  });

  it('sends the next password-reset email with the updated subject and bodies, variables rendered and HTML-escaped', async () => {
    await call(app, 'PATCH', '/api/v1/branding', {
      token: ws.apiKey,
      body: { name: 'Fish & <Chips> "Ltd"', logo_url: 'https://cdn.fish.example/logo.png?size=2&x=1' },
    });
    expect((await put('password_reset', RESET)).status).toBe(200);
    const email = await newUser();
    expect((await forgot(email)).status).toBe(200);
    const received = await mail.waitFor(email);
    const { subject, text, html } = decodeMail(received);

    // Subject and text are plain text: written as they are, never HTML-escaped.
    expect(subject).toBe('Fish & <Chips> "Ltd": your reset link (30 min)');
    expect(text).toMatch(
      /^Hello from Fish & <Chips> "Ltd"!\nReset: https:\/\/id\.example\.test\/reset-password\?token=\S+\nValid 30 minutes\.\n?$/,
    );
    // HTML: every value escaped; the template's own markup kept; sections follow the branding.
    expect(html).toContain('<h1>Fish &amp; &lt;Chips&gt; &quot;Ltd&quot;</h1>');
    expect(html).not.toContain('<Chips>');
    expect(html).toContain('<img src="https:&#x2F;&#x2F;cdn.fish.example&#x2F;logo.png?size&#x3D;2&amp;x&#x3D;1" alt="">');
    expect(html).toContain('<p>No support address.</p>');
    expect(html).toMatch(
      /<a href="https:&#x2F;&#x2F;id\.example\.test&#x2F;reset-password\?token&#x3D;[A-Za-z0-9_-]+">Reset it<\/a> within 30 minutes\./,
    );

    // The link still works.
    const { token } = resetTokenIn(received);
    const done = await call(app, 'POST', '/api/v1/auth/password/reset', {
      headers: { 'x-forwarded-for': someIp() },
      body: { token, password: 'a fresh new passphrase' },
    });
    expect(done.status).toBe(200);
  });

  it('takes Auth0’s names: body for html, {{ url }} for the link; the next reset email carries both', async () => {
    const fresh = await createWorkspace(app, 'Auth0 Names');
    const builtIn = (await call(app, 'GET', '/api/v1/email-templates/password_reset', { token: fresh.apiKey })).body.data;
    expect(builtIn.variables).toContainEqual({ name: 'url', description: expect.stringContaining('Alias of {{link}}') });
    const body = '<p>Forgot it? <a href="{{ url }}">Pick a new one</a> for {{ workspace_name }}.</p>';
    const res = await put('password_reset', { subject: 'New password for {{ workspace_name }}', body }, fresh.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      html: body,
      text: 'Forgot it? Pick a new one: {{ url }} for {{ workspace_name }}.\n',
      customized: true,
    });
    expect(res.body.data.body).toBeUndefined();
    expect((await put('password_reset', { text: 'Reset: {{url}}' }, fresh.apiKey)).status).toBe(200);

    const email = await newUser(fresh);
    expect((await forgot(email, fresh)).status).toBe(200);
    const received = await mail.waitFor(email);
    const { subject, text, html } = decodeMail(received);
    expect(subject).toBe('New password for Auth0 Names');
    expect(html).toMatch(
      /^<p>Forgot it\? <a href="https:&#x2F;&#x2F;id\.example\.test&#x2F;reset-password\?token&#x3D;[A-Za-z0-9_-]+">Pick a new one<\/a> for Auth0 Names\.<\/p>$/,
    );
    expect(text).toMatch(/^Reset: https:\/\/id\.example\.test\/reset-password\?token=[A-Za-z0-9_-]+$/);
    expect(resetTokenIn(received).token).toBeTruthy();

    // Both names at once is ambiguous; `url` is still unknown where there is no link.
    const both = await put('password_reset', { html: '<p>{{link}}</p>', body: '<p>{{url}}</p>' }, fresh.apiKey);
    expect([both.status, both.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(both.body.error.details).toEqual([{ path: 'body', message: 'send html or body, not both' }]);
    expect((await put('access_request_created', { text: '{{url}}' }, fresh.apiKey)).status).toBe(400);
    const doc = (await call(app, 'GET', '/api/v1/openapi.json')).body;
    const bodySchema = doc.paths['/api/v1/email-templates/{key}'].put.requestBody.content['application/json'].schema;
    expect(bodySchema.properties.body.description).toContain('Alias of `html`');
    expect(bodySchema.required ?? []).not.toContain('body');
  });

  it('makes the text part from new HTML while the text is not the workspace’s own; the next reset email says it in both', async () => {
    const fresh = await createWorkspace(app, 'Body Only');
    const first = await put('password_reset', { body: '<p>Lost it? <a href="{{url}}">Choose again</a> &amp; carry on.</p>' }, fresh.apiKey);
    expect(first.body.data.text).toBe('Lost it? Choose again: {{url}} & carry on.\n');
    // Unclosed links by the thousand: the first, pattern-based conversion took minutes on them (quadratic
    // backtracking), which the test's timeout catches; no timing is asserted here.
    const hostile = await put('password_reset', { html: `${'<a href="{{link}}">'.repeat(5000)}<p>x</p>` }, fresh.apiKey);
    expect([hostile.status, hostile.body.data.text.endsWith('x\n')]).toEqual([200, true]);
    const second = await put('password_reset', { html: '<h1>Acme</h1><p>New wording: {{link}}</p>' }, fresh.apiKey);
    expect(second.body.data.text).toBe('Acme\n\nNew wording: {{link}}\n');

    const email = await newUser(fresh);
    expect((await forgot(email, fresh)).status).toBe(200);
    const { text, html } = decodeMail(await mail.waitFor(email));
    expect(text).toMatch(/^Acme\n\nNew wording: https:\/\/id\.example\.test\/reset-password\?token=[A-Za-z0-9_-]+\n$/);
    expect(html).toContain('New wording: ');

    // A text the workspace wrote stays when only the HTML changes afterwards.
    expect((await put('password_reset', { text: 'Own text {{link}}' }, fresh.apiKey)).status).toBe(200);
    const kept = await put('password_reset', { html: '<p>Other wording {{link}}</p>' }, fresh.apiKey);
    expect(kept.body.data).toMatchObject({ html: '<p>Other wording {{link}}</p>', text: 'Own text {{link}}' });
  });

  it('refuses a template that does not parse, with the part and where', async () => {
    const res = await put('password_reset', { ...RESET, html: '<p>\n{{#link}}<a href="{{link}}">x</a></p>' });
    expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(res.body.error.details).toEqual([{ path: 'html', message: expect.stringMatching(/Unclosed section "link".*line 2/) }]);
    const tag = await put('password_reset', { ...RESET, text: 'Reset: {{link' });
    expect(tag.body.error.details).toEqual([{ path: 'text', message: expect.stringMatching(/Unclosed tag/) }]);
  });

  it('refuses unknown variables in any part, naming them and what may be used', async () => {
    const res = await put('password_reset', {
      subject: 'Hi {{user_name}}',
      html: '<p>{{link}} {{password}}</p>',
      text: '{{#branding}}{{name}} {{colour}}{{/branding}} {{branding.nope}}',
    });
    expect(res.status).toBe(400);
    const details = res.body.error.details as { path: string; message: string }[];
    expect(details.map((d) => [d.path, /"([^"]+)"/.exec(d.message)?.[1]])).toEqual([
      ['subject', 'user_name'],
      ['html', 'password'],
      ['text', 'colour'],
      ['text', 'branding.nope'],
    ]);
    expect(details[0]?.message).toContain('link, workspace_name, expires_minutes');
    // A variable of another template is unknown here too.
    expect((await put('password_reset', { ...RESET, text: '{{expires_days}}' })).status).toBe(400);
  });

  it('refuses unescaped values in the HTML, partials and multi-line subjects; allows unescaped text', async () => {
    for (const html of ['<p>{{{branding.name}}}</p>', '<p>{{& link}}</p>', '<p>{{> footer}}</p>']) {
      const res = await put('password_reset', { ...RESET, html });
      expect(res.status, html).toBe(400);
      expect(res.body.error.details[0].path).toBe('html');
    }
    expect((await put('password_reset', { ...RESET, subject: 'Two\nlines' })).status).toBe(400);
    expect((await put('password_reset', { ...RESET, text: '{{{link}}}' })).status).toBe(200);
  });

  it('changes only the parts sent; the others stay as they were', async () => {
    const fresh = await createWorkspace(app, 'Partial Templates');
    const builtIn = (await call(app, 'GET', '/api/v1/email-templates/password_reset', { token: fresh.apiKey })).body.data;
    const res = await put('password_reset', { subject: 'Reset it now' }, fresh.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ subject: 'Reset it now', html: builtIn.html, text: builtIn.text, customized: true });
    const again = await put('password_reset', { text: 'Follow {{link}}' }, fresh.apiKey);
    expect(again.body.data).toMatchObject({ subject: 'Reset it now', html: builtIn.html, text: 'Follow {{link}}' });
  });

  it('validates the body strictly and answers 404 for an unknown key', async () => {
    const empty = await put('password_reset', {});
    expect([empty.status, empty.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect((await put('password_reset', { ...RESET, from: 'evil@example.com' })).status).toBe(400);
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', RESET],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(app, method, '/api/v1/email-templates/welcome', { token: ws.apiKey, ...(body ? { body } : {}) });
      expect([res.status, res.body.error.code], method).toEqual([404, 'NOT_FOUND']);
    }
  });

  it('keeps each workspace’s templates its own', async () => {
    const other = await createWorkspace(app, 'Other Templates');
    await put('password_reset', RESET);
    const list = await call(app, 'GET', '/api/v1/email-templates/', { token: other.apiKey });
    expect(list.body.data.every((t: { customized: boolean }) => !t.customized)).toBe(true);
    const email = await newUser(other);
    await forgot(email, other);
    expect(decodeMail(await mail.waitFor(email)).subject).toBe('Reset your Other Templates password');
  });

  it('fills the built-in reset and invitation emails with the branding: its name, and its logo in the HTML', async () => {
    const branded = await createWorkspace(app, 'Plain Workspace Name');
    const patched = await call(app, 'PATCH', '/api/v1/branding', {
      token: branded.apiKey,
      body: { name: 'Acme & <Sons>', logo_url: 'https://cdn.acme.example/logo.png' },
    });
    expect(patched.status).toBe(200);

    const email = await newUser(branded);
    await forgot(email, branded);
    const reset = decodeMail(await mail.waitFor(email));
    expect(reset.subject).toBe('Reset your Acme & <Sons> password');
    expect(reset.text).toContain('the password of your Acme & <Sons> account');
    expect(reset.html).toContain('<img src="https:&#x2F;&#x2F;cdn.acme.example&#x2F;logo.png" alt="Acme &amp; &lt;Sons&gt;" height="48">');
    expect(reset.html).toContain('your Acme &amp; &lt;Sons&gt; account');
    expect(`${reset.subject}${reset.text}${reset.html}`).not.toContain('Plain Workspace Name');

    const invitee = uniqueEmail('invitee');
    expect((await call(app, 'POST', '/api/v1/invitations', { token: branded.apiKey, body: { email: invitee } })).status).toBe(201);
    const invitation = decodeMail(await mail.waitFor(invitee));
    expect(invitation.subject).toBe('You are invited to Acme & <Sons>');
    expect(invitation.html).toContain('<img src="https:&#x2F;&#x2F;cdn.acme.example&#x2F;logo.png"');
  });

  it('lets viewers read but not change templates, and members do neither', async () => {
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const viewerRole = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    const token: Record<string, string> = {};
    for (const role of ['viewer', 'member']) {
      const email = await newUser();
      const users = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(email)}`, { token: ws.apiKey });
      if (role === 'viewer') {
        await call(app, 'POST', '/api/v1/roles/assign', {
          token: ws.apiKey,
          body: { user_id: users.body.data[0].id, role_id: viewerRole },
        });
      }
      token[role] = (await signIn(app, ws.id, email, PASSWORD)).accessToken;
    }
    expect((await call(app, 'GET', '/api/v1/email-templates/', { token: token.viewer })).status).toBe(200);
    expect((await put('password_reset', RESET, token.viewer)).status).toBe(403);
    expect((await call(app, 'DELETE', '/api/v1/email-templates/password_reset', { token: token.viewer })).status).toBe(403);
    expect((await call(app, 'GET', '/api/v1/email-templates/', { token: token.member })).status).toBe(403);
  });
});
