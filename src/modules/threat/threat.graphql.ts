import { builder, PageMetaRef } from '../../graphql/builder.ts';
import { RISK_OUTCOMES } from './threat.entity.ts';
import { RISK_LEVELS, type RiskScoreView, type ThreatStatsView } from './threat.schema.ts';

const RiskOutcomeRef = builder.enumType('RiskOutcome', { values: RISK_OUTCOMES });
const RiskLevelRef = builder.enumType('RiskLevel', { values: RISK_LEVELS });

const RiskReasonRef = builder.objectRef<RiskScoreView['reasons'][number]>('RiskReason').implement({
  description: 'One signal that raised a score: its code, the points it added and what it counted.',
  fields: (t) => ({
    code: t.exposeString('code'),
    points: t.exposeInt('points'),
    count: t.int({ nullable: true, resolve: (reason) => reason.count ?? null }),
  }),
});

const RiskScoreRef = builder.objectRef<RiskScoreView>('RiskScore').implement({
  description: 'The risk score of one sign-in attempt.',
  fields: (t) => ({
    id: t.exposeID('id'),
    userId: t.exposeString('user_id', { nullable: true }),
    email: t.exposeString('email'),
    ip: t.exposeString('ip', { nullable: true }),
    userAgent: t.exposeString('user_agent', { nullable: true }),
    score: t.exposeInt('score'),
    level: t.field({ type: RiskLevelRef, resolve: (row) => row.level }),
    reasons: t.field({ type: [RiskReasonRef], resolve: (row) => row.reasons }),
    outcome: t.field({ type: RiskOutcomeRef, resolve: (row) => row.outcome }),
    failureReason: t.exposeString('failure_reason', { nullable: true }),
    threshold: t.exposeInt('threshold'),
    createdAt: t.exposeString('created_at'),
  }),
});

const RiskScorePageRef = builder
  .objectRef<{ data: RiskScoreView[]; meta: { total: number; page: number; per_page: number } }>('RiskScorePage')
  .implement({
    fields: (t) => ({
      data: t.field({ type: [RiskScoreRef], resolve: (page) => page.data }),
      meta: t.field({ type: PageMetaRef, resolve: (page) => page.meta }),
    }),
  });

const TopIpRef = builder.objectRef<ThreatStatsView['top_ips'][number]>('ThreatTopIp').implement({
  fields: (t) => ({
    ip: t.exposeString('ip'),
    attempts: t.exposeInt('attempts'),
    failures: t.exposeInt('failures'),
    blocked: t.exposeInt('blocked'),
  }),
});

const ThreatStatsRef = builder.objectRef<ThreatStatsView>('ThreatStats').implement({
  description: 'Sign-in attempts of the last 24 hours in numbers.',
  fields: (t) => ({
    since: t.exposeString('since'),
    until: t.exposeString('until'),
    attempts: t.exposeInt('attempts'),
    successes: t.exposeInt('successes'),
    failures: t.exposeInt('failures'),
    blocked: t.exposeInt('blocked'),
    highRisk: t.exposeInt('high_risk', { description: 'Attempts scoring 50 or more' }),
    lockedAccounts: t.exposeInt('locked_accounts', { description: 'Accounts locked now' }),
    topIps: t.field({ type: [TopIpRef], resolve: (stats) => stats.top_ips }),
  }),
});

builder.queryFields((t) => ({
  threatStats: t.field({
    type: ThreatStatsRef,
    description: 'Threat-detection summary for the last 24 hours.',
    resolve: (_root, _args, ctx) => ctx.caller.threat.stats({}),
  }),
  riskScores: t.field({
    type: RiskScorePageRef,
    description: 'Recent sign-in risk scores, newest first (the last 24 hours unless since is set).',
    args: {
      outcome: t.arg({ type: RiskOutcomeRef }),
      minScore: t.arg.int(),
      since: t.arg.string(),
      page: t.arg.int(),
      perPage: t.arg.int(),
    },
    resolve: (_root, args, ctx) =>
      ctx.caller.threat.recentScores({
        outcome: args.outcome ?? undefined,
        min_score: args.minScore ?? undefined,
        since: args.since ?? undefined,
        page: args.page ?? undefined,
        per_page: args.perPage ?? undefined,
      }),
  }),
}));
