import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';

describe('logger', () => {
  it('writes JSON lines with the level name, and redacts secret fields at any of three depths', () => {
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line));
    log.debug('not at info');
    log.info('sign-in', {
      request_id: 'req-1',
      password: 'hunter2 correct horse',
      body: { refresh_token: 'rt_secret', email: 'a@example.com', nested: { client_secret: 'cs_secret', mfa_token: 'mt' } },
      headers: { authorization: 'Bearer sk_live_key', cookie: 'portal_session=abc' },
    });
    log.error('failed', { error: new Error('boom') });
    expect(lines).toHaveLength(2);
    const text = lines.join('');
    for (const secret of ['hunter2', 'rt_secret', 'cs_secret', 'sk_live_key', 'portal_session=abc']) expect(text).not.toContain(secret);
    const first = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(first).toMatchObject({
      level: 'info',
      msg: 'sign-in',
      request_id: 'req-1',
      password: '[redacted]',
      body: { email: 'a@example.com' },
    });
    expect(typeof first.time).toBe('string');
    expect(JSON.parse(lines[1] as string)).toMatchObject({ level: 'error', error: { name: 'Error', message: 'boom' } });
  });
});
