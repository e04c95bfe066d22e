import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import { createYoga } from 'graphql-yoga';
import type { AppDeps } from '../core/context.ts';
import { createContext } from '../core/context.ts';
import { toAppError } from '../core/error-normalize.ts';
import { createCaller } from '../router.ts';
import type { GraphQLContext } from './builder.ts';
import { graphqlSchema } from './schema.ts';

interface ServerContext {
  req: IncomingMessage;
  res: ServerResponse;
}

/**
 * The GraphQL door. Errors carry the same code as REST and tRPC in `extensions.code`; anything
 * unrecognised is INTERNAL with its detail kept in the log.
 */
export function createGraphQLServer(deps: AppDeps) {
  return createYoga<ServerContext, GraphQLContext>({
    schema: graphqlSchema,
    graphqlEndpoint: '/graphql',
    graphiql: deps.config.NODE_ENV === 'development',
    landingPage: false,
    logging: false,
    context: ({ req }) => ({ caller: createCaller(createContext(deps, req)) }),
    maskedErrors: {
      maskError(error) {
        // Duck-typed: graphql may be loaded twice (ESM and CJS), so instanceof is not reliable here.
        const original = (error as { originalError?: unknown }).originalError;
        if (original === undefined || original === null) return error as Error;
        const located = error as Pick<GraphQLError, 'nodes' | 'path'>;
        const { appError, internal } = toAppError(original);
        if (internal) deps.log.error('unhandled GraphQL error', { error: original });
        return new GraphQLError(appError.message, {
          nodes: located.nodes,
          path: located.path,
          extensions: { code: appError.appCode, http: { status: 200 }, ...(appError.details ? { details: appError.details } : {}) },
        });
      },
    },
  });
}
