import express, { type Router } from 'express';
import type { AppDeps } from '../../core/context.ts';

/** `/.well-known/jwks.json`: the public keys that verify access tokens, old ones until their tokens expire. */
export function wellKnownRoutes(deps: AppDeps): Router {
  const routes = express.Router();
  routes.get('/.well-known/jwks.json', async (_req, res, next) => {
    try {
      res.setHeader('Cache-Control', 'public, max-age=60');
      res.json(await deps.keys.jwks());
    } catch (error) {
      next(error);
    }
  });
  return routes;
}
