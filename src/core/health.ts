import type { Router } from 'express';
import express from 'express';
import type { AppDeps } from './context.ts';
import { sendError } from './envelope.ts';
import { AppError } from './errors.ts';

/** The two probes in the OpenAPI document (CONTRACT: `/healthz` alive, `/readyz` database and Redis reachable). */
export const HEALTH_PATHS: Record<string, Record<string, unknown>> = {
  '/healthz': {
    get: {
      operationId: 'healthz',
      summary: 'The process answers: {"data":{"status":"ok"}}',
      tags: ['health'],
      responses: { '200': { description: 'Alive' } },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readyz',
      summary: 'The database (and Redis, when configured) answer: {"data":{"status":"ready","checks":{…}}}',
      tags: ['health'],
      responses: { '200': { description: 'Ready' }, '503': { description: 'UNAVAILABLE, naming what is unreachable' } },
    },
  },
};

/** `/healthz`: the process answers. `/readyz`: the database (and Redis, when configured) answer too. */
export function healthRoutes(deps: AppDeps): Router {
  const routes = express.Router();
  routes.get('/healthz', (_req, res) => {
    res.json({ data: { status: 'ok' } });
  });
  routes.get('/readyz', async (_req, res) => {
    const checks: Record<string, 'ok' | 'failing'> = {};
    try {
      await deps.orm.em.getConnection().execute('select 1');
      checks.database = 'ok';
    } catch (error) {
      deps.log.warn('readiness: database check failed', { error });
      checks.database = 'failing';
    }
    if (deps.redis) {
      try {
        await deps.redis.ping();
        checks.redis = 'ok';
      } catch (error) {
        deps.log.warn('readiness: redis check failed', { error });
        checks.redis = 'failing';
      }
    }
    const failing = Object.entries(checks)
      .filter(([, v]) => v === 'failing')
      .map(([k]) => k);
    if (failing.length > 0) {
      return sendError(res, new AppError('UNAVAILABLE', `Not ready: ${failing.join(', ')} unreachable`));
    }
    res.json({ data: { status: 'ready', checks } });
  });
  return routes;
}
