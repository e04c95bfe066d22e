import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEvent } from '../src/modules/audit/audit.entity.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { call } from './helpers/http.ts';
import { toldEvents } from './helpers/events.ts';
import { createWorkspace, type TestWorkspace } from './helpers/workspace.ts';

/**
 * core/patch.ts: a PATCH (or a settings PUT) whose members are absent or equal to what is stored
 * changes nothing: 200 with the resource as it is, `updated_at` kept, no audit row, no webhook event.
 */
describe('a PATCH that changes nothing writes nothing, on every resource', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  async function auditCount(eventType: string, targetId: string): Promise<number> {
    const em = app.deps.orm.em.fork();
    return em.count(AuditEvent, { eventType, targetId }, { filters: { tenant: { workspaceId: ws.id } } });
  }

  interface Case {
    /** Creates the resource (or gives it a stored state) and answers its path and audit target id. */
    create: () => Promise<{ path: string; id: string }>;
    audit: string;
    event?: string;
    same: (current: Record<string, unknown>) => Record<string, unknown>[];
    change: Record<string, unknown>;
    method?: string;
    /** How the resource is read, when it has no GET of its own. */
    read?: () => Promise<unknown>;
  }

  const cases: Record<string, Case> = {
    users: {
      create: async () => {
        const res = await call(app, 'POST', '/api/v1/users', {
          token: ws.apiKey,
          body: { email: 'noop-user@example.com', password: 'a long passphrase', name: 'Noop User', metadata: { team: 'blue' } },
        });
        return { path: `/api/v1/users/${res.body.data.id}`, id: res.body.data.id };
      },
      audit: 'user.update',
      event: 'user.updated',
      same: (user) => [
        { name: user.name },
        { email: user.email, status: 'active', email_verified: user.email_verified },
        { metadata: { team: 'blue' } },
      ],
      change: { name: 'Noop User 2' },
    },
    organizations: {
      create: async () => {
        const res = await call(app, 'POST', '/api/v1/organizations', {
          token: ws.apiKey,
          body: { name: 'Noop Org', domains: ['noop-b.example', 'noop-a.example'], sso: { enabled: true } },
        });
        return { path: `/api/v1/organizations/${res.body.data.id}`, id: res.body.data.id };
      },
      audit: 'organization.update',
      event: 'organization.updated',
      same: (org) => [
        { name: org.name },
        { domains: ['noop-a.example', 'noop-b.example', 'noop-a.example'] },
        { sso: {} },
        { sso: { enabled: true } },
      ],
      change: { name: 'Noop Org 2' },
    },
    applications: {
      create: async () => {
        const res = await call(app, 'POST', '/api/v1/applications', {
          token: ws.apiKey,
          body: { name: 'Noop App', type: 'spa', redirect_uris: ['https://app.example/callback'] },
        });
        return { path: `/api/v1/applications/${res.body.data.id}`, id: res.body.data.id };
      },
      audit: 'application.update',
      same: (application) => [
        { name: application.name },
        { callbacks: ['https://app.example/callback'] },
        { redirect_uris: ['https://app.example/callback'], post_logout_redirect_uris: [] },
      ],
      change: { name: 'Noop App 2' },
    },
    webhooks: {
      create: async () => {
        const res = await call(app, 'POST', '/api/v1/webhooks', {
          token: ws.apiKey,
          body: { url: 'http://127.0.0.1:9/noop', event_types: ['user.created'] },
        });
        return { path: `/api/v1/webhooks/${res.body.data.id}`, id: res.body.data.id };
      },
      audit: 'webhook.update',
      same: (endpoint) => [{ url: endpoint.url, enabled: true }, { events: ['user.created', 'user.created'] }],
      change: { enabled: false },
    },
    groups: {
      create: async () => {
        const res = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Noop Group', description: 'd' } });
        return { path: `/api/v1/groups/${res.body.data.id}`, id: res.body.data.id };
      },
      audit: 'group.update',
      same: () => [{ name: 'Noop Group', description: 'd' }],
      change: { description: null },
    },
    roles: {
      create: async () => {
        const res = await call(app, 'POST', '/api/v1/roles', {
          token: ws.apiKey,
          body: { name: 'Noop Role', permissions: ['users:read', 'groups:read'] },
        });
        return { path: `/api/v1/roles/${res.body.data.id}`, id: res.body.data.id };
      },
      audit: 'role.update',
      same: () => [{ name: 'Noop Role', permissions: ['groups:read', 'users:read'] }],
      change: { name: 'Noop Role 2' },
    },
    actions: {
      create: async () => {
        const res = await call(app, 'POST', '/api/v1/actions/', {
          token: ws.apiKey,
          body: { name: 'Noop Action', code: 'exports.onExecutePostLogin = async (event, api) => {};' },
        });
        return { path: `/api/v1/actions/${res.body.data.id}`, id: res.body.data.id };
      },
      audit: 'action.update',
      same: (action) => [{ name: action.name, code: action.code }],
      change: { name: 'Noop Action 2' },
    },
    branding: {
      create: async () => {
        await call(app, 'PATCH', '/api/v1/branding', { token: ws.apiKey, body: { name: 'Noop Brand' } });
        return { path: '/api/v1/branding', id: ws.id };
      },
      audit: 'branding.update',
      same: () => [{ name: 'Noop Brand' }],
      change: { name: 'Noop Brand 2' },
    },
    threat: {
      create: async () => {
        await call(app, 'PATCH', '/api/v1/threat/settings', { token: ws.apiKey, body: { block_threshold: 80 } });
        return { path: '/api/v1/threat/settings', id: ws.id };
      },
      audit: 'threat.settings_update',
      same: (settings) => [{ block_threshold: 80, blocking_enabled: settings.blocking_enabled }],
      change: { block_threshold: 81 },
    },
    'idp-attributes': {
      create: async () => ({ path: '/api/v1/idp-attributes/locale', id: 'locale' }),
      audit: 'idp_attribute.update',
      read: async () => {
        const list = await call(app, 'GET', '/api/v1/idp-attributes?per_page=100', { token: ws.apiKey });
        return list.body.data.find((attribute: { key: string }) => attribute.key === 'locale');
      },
      // A built-in never changed: its defaults are what is stored.
      same: () => [{ enabled: false }, { name: 'Locale', enabled: false }],
      change: { enabled: true },
    },
    'email-templates': {
      create: async () => {
        await call(app, 'PUT', '/api/v1/email-templates/password_reset', {
          token: ws.apiKey,
          body: { subject: 'Reset your {{workspace_name}} password' },
        });
        return { path: '/api/v1/email-templates/password_reset', id: 'password_reset' };
      },
      method: 'PUT',
      audit: 'email_template.update',
      same: (template) => [{ subject: template.subject }, { subject: template.subject, html: template.html, text: template.text }],
      change: { subject: 'Reset it, {{workspace_name}}' },
    },
  };

  it.each(Object.keys(cases))('%s', async (name) => {
    const spec = cases[name] as Case;
    const method = spec.method ?? 'PATCH';
    const { path, id } = await spec.create();
    const read = spec.read ?? (async () => (await call(app, 'GET', path, { token: ws.apiKey })).body.data);
    const before = (await read()) as Record<string, unknown>;
    expect(before).toBeDefined();
    const audits = await auditCount(spec.audit, id);
    const events = spec.event ? (await toldEvents(app, ws.id, spec.event)).length : 0;
    const bodies = method === 'PATCH' ? [{}, ...spec.same(before)] : spec.same(before);
    for (const body of bodies) {
      const res = await call(app, method, path, { token: ws.apiKey, body });
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.body.data, JSON.stringify(body)).toEqual(before);
    }
    expect(await read()).toEqual(before);
    expect(await auditCount(spec.audit, id)).toBe(audits);
    if (spec.event) expect((await toldEvents(app, ws.id, spec.event)).length).toBe(events);
    // A real change is written, audited and told.
    const changed = await call(app, method, path, { token: ws.apiKey, body: spec.change });
    expect(changed.status).toBe(200);
    expect(changed.body.data).not.toEqual(before);
    expect(await auditCount(spec.audit, id)).toBe(audits + 1);
    if (spec.event) expect((await toldEvents(app, ws.id, spec.event)).length).toBe(events + 1);
  });
});
