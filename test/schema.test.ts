import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILES } from '../scripts/schema-files.ts';

describe('generated contracts', () => {
  it.each(Object.keys(SCHEMA_FILES))('%s is current (run npm run schema)', async (file) => {
    const committed = await readFile(file, 'utf8');
    expect(committed).toBe((SCHEMA_FILES[file] as () => string)());
  });

  it('schema/openapi.json is a valid OpenAPI 3.1 document', async () => {
    const doc = JSON.parse(await readFile('schema/openapi.json', 'utf8'));
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes the spec paths that exist so far, spelled exactly', async () => {
    const doc = JSON.parse(await readFile('schema/openapi.json', 'utf8'));
    expect(Object.keys(doc.paths['/api/v1/users'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(doc.paths['/api/v1/users/{id}'])).toContain('get');
    expect(Object.keys(doc.paths['/api/v1/api-keys'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(doc.paths['/api/v1/api-keys/{id}'])).toContain('delete');
    expect(Object.keys(doc.paths['/platform/v1/workspaces'])).toContain('post');
    // Public calls need no credential; sign-in names its workspace in X-Tenant-ID, or by a credential
    // sent instead; other public calls take neither; creates answer 201.
    const login = doc.paths['/api/v1/auth/login'].post;
    expect(login.security).toEqual([{}, { Authorization: [] }]);
    const tenant = login.parameters.find((p: { name: string; in: string }) => `${p.in}:${p.name}` === 'header:X-Tenant-ID');
    expect(tenant.required).toBe(false);
    expect(doc.paths['/api/v1/auth/refresh'].post.security).toEqual([]);
    expect(doc.paths['/api/v1/users'].post.security).toEqual([{ Authorization: [] }]);
    expect(Object.keys(doc.paths['/api/v1/users'].post.responses)).toContain('201');
    expect(Object.keys(doc.paths['/api/v1/users'].post.responses)).not.toContain('200');
    // Express routes, written out by hand: the spec's social sign-in, the CONTRACT's callback and probes.
    for (const path of ['/api/v1/auth/oauth/{provider}/start', '/api/v1/auth/oauth/{provider}/callback', '/healthz', '/readyz']) {
      expect(Object.keys(doc.paths[path] ?? {}), path).toEqual(['get']);
    }
  });
});
