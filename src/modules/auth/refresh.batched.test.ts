import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn, type SignedIn } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { metricValue, scrapeMetrics } from '../../../test/helpers/metrics.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { newId } from '../../core/ids.ts';
import { newSecret, sha256 } from '../../core/secrets.ts';

const METRICS_TOKEN = 'metrics-token-refresh-batches';

/**
 * Refreshes that arrive together share one statement (sessions.service.ts, core/batched-call.ts).
 * Sharing must never blur the answers: in one burst, each refresh answers what it would alone.
 */
describe('refreshes of concurrent requests that share a statement', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ METRICS_TOKEN });
    ws = await createWorkspace(app, 'Refresh batches');
    other = await createWorkspace(app, 'Refresh batches, other');
  });
  afterAll(() => app.close());

  const refresh = (token: string, tenant?: string) =>
    call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: token }, headers: tenant ? { 'x-tenant-id': tenant } : {} });

  /**
   * Refreshes in one tRPC batch request: its calls start in the same turn, so they share one
   * statement (REST requests arriving together do too, but how many share depends on the sockets).
   */
  async function refreshTogether(tokens: string[], tenant?: string): Promise<{ status: number; token?: string; code?: string }[]> {
    const res = await call(app, 'POST', `/trpc/${tokens.map(() => 'auth.refresh').join(',')}?batch=1`, {
      body: Object.fromEntries(tokens.map((token, i) => [String(i), { refresh_token: token }])),
      headers: tenant ? { 'x-tenant-id': tenant } : {},
    });
    return (res.body as { result?: { data: { refresh_token: string } }; error?: { data: { httpStatus: number; appCode: string } } }[]).map(
      (answer) =>
        answer.result
          ? { status: 200, token: answer.result.data.refresh_token }
          : { status: answer.error?.data.httpStatus ?? 0, code: answer.error?.data.appCode },
    );
  }

  async function counters(): Promise<{ refreshes: number; statements: number }> {
    const text = await scrapeMetrics(app, METRICS_TOKEN);
    return { refreshes: metricValue(text, 'refresh_rotations_total'), statements: metricValue(text, 'refresh_rotation_statements_total') };
  }

  /** A second unused refresh token of a session (a session rotates to one at a time; stored rows may hold more). */
  async function secondToken(session: SignedIn): Promise<string> {
    const secret = newSecret('rt_');
    await app.deps.orm.em.getConnection().execute(
      `insert into refresh_tokens (id, workspace_id, session_id, token_hash, created_at, expires_at)
         select ?, workspace_id, id, ?, created_at, expires_at from sessions where id = ?`,
      [newId('rtk'), sha256(secret), session.sessionId],
    );
    return secret;
  }

  it('answers each refresh of one statement as alone: live ones rotate, a replay ends its session, a token sent twice wins once', async () => {
    const [live, twoTokens, replayed, ended, twice] = (await Promise.all(
      Array.from({ length: 5 }, () => signIn(app, ws.id, ws.owner.email, ws.owner.password)),
    )) as [SignedIn, SignedIn, SignedIn, SignedIn, SignedIn];
    const rotated = await refresh(replayed.refreshToken);
    expect(rotated.status).toBe(200);
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: ended.accessToken })).status).toBe(200);
    const extra = await secondToken(twoTokens);
    const unknown = newSecret('rt_');

    const tokens = [live, twoTokens].map((s) => s.refreshToken);
    tokens.push(extra, replayed.refreshToken, ended.refreshToken, twice.refreshToken, twice.refreshToken, unknown);
    const before = await counters();
    const answers = await refreshTogether(tokens);
    const after = await counters();
    expect(after.refreshes - before.refreshes).toBe(tokens.length);
    expect(after.statements - before.statements).toBe(1);

    const refused = { status: 401, code: 'INVALID_TOKEN' };
    const [liveAnswer, first, second, replay, late, twiceA, twiceB, stranger] = answers;
    expect([liveAnswer?.status, first?.status, second?.status]).toEqual([200, 200, 200]);
    expect([replay, late, stranger]).toEqual([refused, refused, refused]);
    expect([twiceA?.status, twiceB?.status].sort()).toEqual([200, 401]);

    // The replay ended its session: the token its first use answered is refused now.
    expect((await refresh(rotated.body.data.refresh_token)).status).toBe(401);
    // Each new token of a live session rotates once more, alone; both of the session with two.
    for (const answer of [liveAnswer, first, second]) expect((await refresh(answer?.token as string)).status).toBe(200);
  });

  it('keeps each refresh of one statement to its workspace: another workspace’s token is refused and left as it was', async () => {
    const mine = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const theirs = await signIn(app, other.id, other.owner.email, other.owner.password);
    const answers = await refreshTogether([mine.refreshToken, theirs.refreshToken], other.id);
    expect(answers.map((a) => a.status)).toEqual([401, 200]);
    expect((await refresh(mine.refreshToken, ws.id)).status).toBe(200);
  });
});
