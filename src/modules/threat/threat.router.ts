import { z } from 'zod';
import { auditScope } from '../../core/audit-scope.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import { recentScoresInput, riskScorePage, threatSettingsOutput, threatStatsOutput, updateThreatSettingsInput } from './threat.schema.ts';
import { getThreatSettings, recentScores, threatStats, updateThreatSettings } from './threat.service.ts';

const tags = ['threat'];

export const threatRouter = router({
  stats: managementProcedure('threat:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/threat/stats',
        tags,
        summary: 'Threat-detection summary for the last 24 hours',
        protect: true,
      },
    })
    .input(z.object({}).prefault({}))
    .output(threatStatsOutput)
    .query(({ ctx }) => threatStats(ctx.em, ctx.workspaceId, ctx.deps.clock.now())),

  recentScores: managementProcedure('threat:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/threat/scores/recent',
        tags,
        summary: 'Recent sign-in risk scores with their reasons, newest first (last 24 hours unless since is set)',
        protect: true,
      },
    })
    .input(recentScoresInput)
    .output(riskScorePage)
    .query(({ ctx, input }) => recentScores(ctx.em, input, ctx.deps.clock.now())),

  settings: managementProcedure('threat:read')
    .meta({
      openapi: { method: 'GET', path: '/api/v1/threat/settings', tags, summary: 'The score at which sign-ins are blocked', protect: true },
    })
    .input(z.object({}).prefault({}))
    .output(threatSettingsOutput)
    .query(({ ctx }) => getThreatSettings(ctx.em, ctx.workspaceId)),

  updateSettings: managementProcedure('threat:write')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/threat/settings',
        tags,
        summary: 'Change the block threshold (1–100) or turn blocking off',
        protect: true,
      },
      audit: 'threat.settings_update',
    })
    .input(updateThreatSettingsInput)
    .output(threatSettingsOutput)
    .mutation(({ ctx, input }) => updateThreatSettings(auditScope(ctx), input, ctx.deps.clock.now())),
});
