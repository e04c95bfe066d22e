import { z } from 'zod';
import { instantInput } from '../../core/instant.ts';
import { pageOf, pageParams, queryNumber } from '../../core/pagination.ts';
import { RISK_OUTCOMES } from './threat.entity.ts';

export const RISK_LEVELS = ['low', 'medium', 'high'] as const;

export const riskScoreOutput = z
  .object({
    id: z.string(),
    user_id: z.string().nullable(),
    email: z.string(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    score: z.number().int().min(0).max(100),
    level: z.enum(RISK_LEVELS),
    reasons: z.array(z.object({ code: z.string(), points: z.number().int(), count: z.number().int().optional() })),
    outcome: z.enum(RISK_OUTCOMES),
    failure_reason: z.string().nullable(),
    threshold: z.number().int(),
    created_at: z.string(),
  })
  .meta({ id: 'RiskScore' });
export type RiskScoreView = z.infer<typeof riskScoreOutput>;

export const riskScorePage = pageOf(riskScoreOutput);

export const recentScoresInput = z
  .object({
    outcome: z.enum(RISK_OUTCOMES).optional(),
    min_score: queryNumber(z.number().int().min(0).max(100)).optional(),
    user_id: z.string().max(100).optional(),
    ip: z.string().max(100).optional(),
    since: instantInput.optional(),
    ...pageParams,
  })
  .prefault({});
export type RecentScoresInput = z.infer<typeof recentScoresInput>;

export const threatStatsOutput = z
  .object({
    since: z.string(),
    until: z.string(),
    attempts: z.number().int(),
    successes: z.number().int(),
    failures: z.number().int(),
    blocked: z.number().int(),
    high_risk: z.number().int().describe('Attempts scoring 50 or more'),
    locked_accounts: z.number().int().describe('Accounts locked now'),
    top_ips: z.array(z.object({ ip: z.string(), attempts: z.number().int(), failures: z.number().int(), blocked: z.number().int() })),
  })
  .meta({ id: 'ThreatStats' });
export type ThreatStatsView = z.infer<typeof threatStatsOutput>;

export const threatSettingsOutput = z
  .object({
    block_threshold: z.number().int().describe('Sign-ins scoring this or more are blocked'),
    blocking_enabled: z.boolean(),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'ThreatSettings' });
export type ThreatSettingsView = z.infer<typeof threatSettingsOutput>;

/** Either or both; an empty body changes nothing and answers the settings (core/patch.ts). */
export const updateThreatSettingsInput = z.strictObject({
  block_threshold: z.number().int().min(1).max(100).optional(),
  blocking_enabled: z.boolean().optional(),
});
