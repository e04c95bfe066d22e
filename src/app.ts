import express, { type Express } from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import type { AppDeps } from './core/context.ts';
import { createContext } from './core/context.ts';
import { trpcResponseMeta } from './core/envelope.ts';
import { restDoor, restMethodNotAllowed } from './core/rest-door.ts';
import { restCors } from './core/cors.ts';
import { TRPC_MAX_BATCH_SIZE } from './core/trpc-batch.ts';
import { healthRoutes } from './core/health.ts';
import {
  MAX_BODY_BYTES,
  errorHandler,
  globalRateLimit,
  limitBody,
  limitJsonDepth,
  noStore,
  notFound,
  requestContext,
  securityHeaders,
} from './core/http.ts';
import { buildOpenApiDocument } from './core/openapi.ts';
import {
  checkGraphQLQueryString,
  createGraphQLServer,
  onlyGraphQLEndpoint,
  refuseLargeGraphQLBody,
  requireJsonGraphQLBody,
} from './graphql/yoga.ts';
import { wellKnownRoutes } from './modules/auth/well-known.routes.ts';
import { brandingRoutes } from './modules/branding/branding.routes.ts';
import { externalSignInRoutes } from './modules/sso/sign-in.routes.ts';
import { portalRoutes } from './modules/sso/portal.routes.ts';
import { oauthRoutes } from './oauth/routes.ts';
import { appRouter } from './router.ts';
import { webAppRoutes } from './web-serving/web-app.routes.ts';

/** Express composition: cross-cutting middleware, then the three doors. Nothing else lives here. */
export function buildApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);
  app.set('json spaces', 0);

  app.use(deps.metrics.middleware());
  app.use(requestContext);
  app.use(securityHeaders(deps.config.BASE_URL));
  app.get('/metrics', deps.metrics.handler(deps.config.METRICS_TOKEN));
  // Before the limit: every REST answer, a 429 too, carries CORS; a preflight is not counted.
  app.use(restCors(deps));
  app.use(globalRateLimit(deps));

  const openApiDocument = buildOpenApiDocument(deps.config.BASE_URL);
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });

  const json = express.json({ limit: MAX_BODY_BYTES, type: ['application/json', 'application/*+json'] });
  app.use(['/api/v1', '/platform/v1', '/trpc'], noStore, json, limitJsonDepth);
  // The spec's paths first, as most requests are theirs; a path it does not know goes on to the rest.
  app.use(restDoor(deps));
  app.use(healthRoutes(deps));
  app.use(wellKnownRoutes(deps));
  app.use(oauthRoutes(deps));
  app.use(externalSignInRoutes(deps));
  app.use(portalRoutes(deps));
  app.use(brandingRoutes(deps));
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      createContext: ({ req }) => createContext(deps, req),
      responseMeta: trpcResponseMeta(deps.config.BASE_URL),
      maxBatchSize: TRPC_MAX_BATCH_SIZE,
    }),
  );

  const yoga = createGraphQLServer(deps);
  app.use(
    '/graphql',
    onlyGraphQLEndpoint,
    noStore,
    limitBody(refuseLargeGraphQLBody),
    requireJsonGraphQLBody,
    checkGraphQLQueryString,
    (req, res) => yoga(req, res),
  );
  app.use(webAppRoutes({ baseUrl: deps.config.BASE_URL }));

  app.use(restMethodNotAllowed(deps));
  app.use(notFound);
  app.use(errorHandler(deps));
  return app;
}
