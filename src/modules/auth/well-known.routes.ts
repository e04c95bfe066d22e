import express, { type Router } from 'express';
import type { AppDeps } from '../../core/context.ts';
import { JWKS_MAX_AGE_SECONDS } from './signing-keys.ts';

/**
 * `/.well-known/jwks.json`: the public keys that verify access tokens, old ones until their tokens
 * expire, never a revoked one. Cached for at most a minute, well inside the 5 minutes a new key is
 * published before it signs (signing-keys.ts). Public and readable from any origin, as the discovery
 * document is (a browser app verifies id_tokens with it).
 */
export function wellKnownRoutes(deps: AppDeps): Router {
  const routes = express.Router();
  routes.options('/.well-known/jwks.json', (_req, res) => {
    res.set({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Max-Age': '86400' });
    res.status(204).end();
  });
  routes.get('/.well-known/jwks.json', async (_req, res, next) => {
    try {
      res.setHeader('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.json(await deps.keys.jwks());
    } catch (error) {
      next(error);
    }
  });
  return routes;
}
