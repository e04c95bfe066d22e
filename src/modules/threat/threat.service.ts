import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { isId } from '../../core/ids.ts';
import { offsetOf, toPage } from '../../core/pagination.ts';
import { DEFAULT_BLOCK_THRESHOLD, DEFAULT_BLOCKING_ENABLED, HIGH_RISK_SCORE } from './risk.ts';
import { RiskScore, ThreatSettings } from './threat.entity.ts';
import type { RecentScoresInput, RiskScoreView, ThreatSettingsView, ThreatStatsView } from './threat.schema.ts';
import { differs } from '../../core/patch.ts';
import { DAY } from '../../core/clock.ts';

function levelOf(score: number): RiskScoreView['level'] {
  if (score >= HIGH_RISK_SCORE) return 'high';
  return score >= HIGH_RISK_SCORE / 2 ? 'medium' : 'low';
}

function toView(row: RiskScore): RiskScoreView {
  return {
    id: row.id,
    user_id: row.userId,
    email: row.email,
    ip: row.ip,
    user_agent: row.userAgent,
    score: row.score,
    level: levelOf(row.score),
    reasons: row.reasons,
    outcome: row.outcome,
    failure_reason: row.failureReason,
    threshold: row.threshold,
    created_at: row.createdAt.toISOString(),
  };
}

/** Scored sign-in attempts, newest first: the last 24 hours unless `since` says otherwise. */
export async function recentScores(em: EntityManager, query: RecentScoresInput, now: Date) {
  const since = query.since ? new Date(query.since) : new Date(now.getTime() - DAY);
  const where: Record<string, unknown> = { createdAt: { $gte: since } };
  if (query.outcome) where.outcome = query.outcome;
  if (query.min_score !== undefined) where.score = { $gte: query.min_score };
  if (query.user_id) where.userId = isId('usr', query.user_id) ? query.user_id : '';
  if (query.ip) where.ip = query.ip;
  const [rows, total] = await em.findAndCount(RiskScore, where, { orderBy: { createdAt: 'desc', id: 'desc' }, ...offsetOf(query) });
  return toPage(rows.map(toView), total, query);
}

/** The last 24 hours of sign-in attempts in numbers, and the five IPs that tried most. */
export async function threatStats(em: EntityManager, workspaceId: string, now: Date): Promise<ThreatStatsView> {
  const since = new Date(now.getTime() - DAY);
  const [totals] = await em.execute<Omit<ThreatStatsView, 'since' | 'until' | 'top_ips' | 'locked_accounts'>[]>(
    `select count(*)::int as attempts,
            count(*) filter (where outcome = 'allowed')::int as successes,
            count(*) filter (where outcome = 'failure')::int as failures,
            count(*) filter (where outcome = 'blocked')::int as blocked,
            count(*) filter (where score >= ?)::int as high_risk
       from risk_scores where workspace_id = ? and created_at > ? and created_at <= ?`,
    [HIGH_RISK_SCORE, workspaceId, since, now],
  );
  const topIps = await em.execute<ThreatStatsView['top_ips']>(
    `select ip, count(*)::int as attempts,
            count(*) filter (where outcome = 'failure')::int as failures,
            count(*) filter (where outcome = 'blocked')::int as blocked
       from risk_scores where workspace_id = ? and created_at > ? and created_at <= ? and ip is not null
      group by ip order by attempts desc, ip limit 5`,
    [workspaceId, since, now],
  );
  const [locked] = await em.execute<{ n: number }[]>(
    `select count(*)::int as n from users where workspace_id = ? and status = 'locked' and (locked_until is null or locked_until > ?)`,
    [workspaceId, now],
  );
  return {
    since: since.toISOString(),
    until: now.toISOString(),
    attempts: totals?.attempts ?? 0,
    successes: totals?.successes ?? 0,
    failures: totals?.failures ?? 0,
    blocked: totals?.blocked ?? 0,
    high_risk: totals?.high_risk ?? 0,
    locked_accounts: locked?.n ?? 0,
    top_ips: topIps,
  };
}

function settingsView(settings: ThreatSettings | null): ThreatSettingsView {
  return {
    block_threshold: settings?.blockThreshold ?? DEFAULT_BLOCK_THRESHOLD,
    blocking_enabled: settings?.blockingEnabled ?? DEFAULT_BLOCKING_ENABLED,
    updated_at: settings?.updatedAt.toISOString() ?? null,
  };
}

export async function getThreatSettings(em: EntityManager, workspaceId: string): Promise<ThreatSettingsView> {
  return settingsView(await em.findOne(ThreatSettings, { workspaceId }));
}

export async function updateThreatSettings(
  scope: AuditScope,
  input: { block_threshold?: number; blocking_enabled?: boolean },
  now: Date,
): Promise<ThreatSettingsView> {
  const { em, workspaceId } = scope;
  let settings = await em.findOne(ThreatSettings, { workspaceId });
  const before = settingsView(settings);
  // Nothing sent differs from what is in force: nothing is written (core/patch.ts).
  if (!differs(input.block_threshold, before.block_threshold) && !differs(input.blocking_enabled, before.blocking_enabled)) return before;
  if (!settings) {
    settings = Object.assign(new ThreatSettings(), {
      workspaceId,
      blockThreshold: DEFAULT_BLOCK_THRESHOLD,
      blockingEnabled: DEFAULT_BLOCKING_ENABLED,
      updatedAt: now,
    });
    em.persist(settings);
  }
  if (input.block_threshold !== undefined) settings.blockThreshold = input.block_threshold;
  if (input.blocking_enabled !== undefined) settings.blockingEnabled = input.blocking_enabled;
  settings.updatedAt = now;
  const after = settingsView(settings);
  recordAudit(scope, {
    eventType: 'threat.settings_update',
    target: { type: 'workspace', id: workspaceId },
    details: {
      block_threshold: { from: before.block_threshold, to: after.block_threshold },
      blocking_enabled: { from: before.blocking_enabled, to: after.blocking_enabled },
    },
  });
  return after;
}
