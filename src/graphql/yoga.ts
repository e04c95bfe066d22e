import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler, Response } from 'express';
import { GraphQLError, parse, type ASTVisitor, type DocumentNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import type { AppDeps } from '../core/context.ts';
import { createContext } from '../core/context.ts';
import { sendGraphQLError } from '../core/envelope.ts';
import { toAppError } from '../core/error-normalize.ts';
import { AppError } from '../core/errors.ts';
import { BODY_TOO_LARGE, notFound } from '../core/http.ts';
import { createCaller } from '../router.ts';
import type { GraphQLContext } from './builder.ts';
import { introspectionForCallers } from './introspection.ts';
import { ProcedureCallLimitRule } from './procedure-calls.ts';
import { graphqlSchema } from './schema.ts';

interface ServerContext {
  req: IncomingMessage;
  res: ServerResponse;
}

/**
 * graphql-js parses recursively: a document nested a few thousand levels deep overflows the stack (a
 * 500). A document is capped at 2,000 tokens (the parser stops at once, well before the stack runs
 * out) and 32 levels of selections; the reports' deepest query is 5 levels.
 */
const MAX_TOKENS = 2_000;
const MAX_DEPTH = 32;

function depthOf(document: DocumentNode): number {
  const pending: [SelectionSetNode, number][] = [];
  for (const definition of document.definitions) {
    if ('selectionSet' in definition && definition.selectionSet) pending.push([definition.selectionSet, 1]);
  }
  let deepest = 0;
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [set, depth] = next;
    deepest = Math.max(deepest, depth);
    for (const selection of set.selections) {
      if ('selectionSet' in selection && selection.selectionSet) pending.push([selection.selectionSet, depth + 1]);
    }
  }
  return deepest;
}

function boundedParse(source: Parameters<typeof parse>[0], options?: Parameters<typeof parse>[1]): DocumentNode {
  const document = parse(source, { ...options, maxTokens: MAX_TOKENS });
  if (depthOf(document) > MAX_DEPTH) {
    throw new GraphQLError(`The query is nested deeper than ${MAX_DEPTH} levels`, { extensions: { code: 'BAD_REQUEST' } });
  }
  return document;
}

/**
 * graphql 16 validates a subscription against a schema without a subscription type and only execution
 * refuses it, with no code. Refused here instead, as any invalid document is.
 */
function KnownOperationTypeRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(operation) {
      if (context.getSchema().getRootType(operation.operation)) return;
      context.reportError(
        new GraphQLError(`This schema has no ${operation.operation} operations`, { nodes: operation, extensions: { code: 'BAD_REQUEST' } }),
      );
    },
  };
}

/** What Yoga hands its result processors (not exported by name). */
type ProcessedResult = Parameters<NonNullable<Plugin['onResultProcess']>>[0]['result'];

/** Yoga's own codes for a request it cannot run; every door answers those BAD_REQUEST. */
const YOGA_REQUEST_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'OPERATION_RESOLUTION_FAILURE']);

/**
 * Errors Yoga and graphql give for the request itself (a syntax error, an unknown field, an operation
 * name the document lacks, a malformed parameter) carry Yoga's codes or none; they get BAD_REQUEST,
 * their message kept. Errors of resolvers already carry their AppError code (maskError).
 */
function recodeRequestErrors(result: ProcessedResult): void {
  if (Symbol.asyncIterator in result) return;
  for (const one of Array.isArray(result) ? result : [result]) {
    for (const error of one.errors ?? []) {
      const extensions = error.extensions as Record<string, unknown>;
      const code = extensions['code'];
      const status = (extensions['http'] as { status?: unknown } | undefined)?.status;
      const refused = typeof status === 'number' && status >= 400 && status < 500;
      if ((typeof code === 'string' && YOGA_REQUEST_CODES.has(code)) || (code === undefined && refused)) extensions['code'] = 'BAD_REQUEST';
    }
  }
}

const boundedDocuments: Plugin = {
  onParse: ({ setParseFn }) => setParseFn(boundedParse),
  onValidate: ({ addValidationRule }) => {
    addValidationRule(KnownOperationTypeRule);
    addValidationRule(ProcedureCallLimitRule);
  },
  onResultProcess: ({ result }) => recodeRequestErrors(result),
};

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
    // Any origin may call with a bearer credential, and never with the browser's: no credential rides
    // in a cookie today, and a cookie added later must not turn every site into a caller of this API.
    cors: { credentials: false },
    context: ({ req }) => ({ caller: createCaller(createContext(deps, req)) }),
    plugins: [boundedDocuments, introspectionForCallers(deps)],
    maskedErrors: {
      maskError(error) {
        // Duck-typed: graphql may be loaded twice (ESM and CJS), so instanceof is not reliable here.
        const original = (error as { originalError?: unknown }).originalError;
        if (original === undefined || original === null) return error as Error;
        const located = error as Pick<GraphQLError, 'nodes' | 'path'>;
        // A GraphQLError underneath is graphql's own verdict on the request (a variable that does not
        // coerce: `"" ` for an Int): the caller's mistake, not ours.
        if ((original as { name?: unknown }).name === 'GraphQLError') {
          return new GraphQLError((original as Error).message, {
            nodes: located.nodes,
            path: located.path,
            extensions: { code: 'BAD_REQUEST' },
          });
        }
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

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * GraphQL has one endpoint, `/graphql`; a path below it (`/graphql/nope`) is an unknown path, 404 in
 * the envelope as any other. Yoga answered it 404 with an empty body.
 */
export const onlyGraphQLEndpoint: RequestHandler = (req, res, next) => {
  if (req.path === '/') return next();
  notFound(req, res, next);
};

/** CONTRACT: a body over 1 MiB is 413 BAD_REQUEST; on /graphql, in GraphQL's error shape. */
export function refuseLargeGraphQLBody(res: Response): void {
  sendGraphQLError(res, new AppError('BAD_REQUEST', BODY_TOO_LARGE, { status: 413 }));
}

/** The media types Yoga reads a POST body as (its own test: the first type named, parameters allowed). */
const JSON_BODY_TYPES = ['application/json', 'application/graphql+json'];

function isJsonBody(contentType: string | undefined): boolean {
  const first = contentType?.split(',')[0] ?? '';
  return JSON_BODY_TYPES.some((type) => first === type || first.startsWith(`${type};`));
}

/**
 * A POST's body is JSON, as on the other doors (a body of another type is 400 BAD_REQUEST there too).
 * Yoga answered a body it has no parser for (text/plain, none) 415 with an empty body, and read
 * `application/x-www-form-urlencoded` and `multipart/form-data`, the bodies any page's HTML form
 * can send to another site without asking first. Refused here in GraphQL's error shape.
 */
export const requireJsonGraphQLBody: RequestHandler = (req, res, next) => {
  if (req.method !== 'POST' || isJsonBody(req.headers['content-type'])) return next();
  sendGraphQLError(res, new AppError('BAD_REQUEST', 'Send the body as application/json'));
};

/**
 * Yoga reads a GET's `variables` and `extensions` with JSON.parse and answers 500 when they are not
 * JSON (or are repeated); they are checked here first and refused with 400 in GraphQL's error shape.
 */
export const checkGraphQLQueryString: RequestHandler = (req, res, next) => {
  if (req.method !== 'GET') return next();
  const params = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length));
  for (const name of ['variables', 'extensions']) {
    const values = params.getAll(name);
    // Yoga's parser joins a repeated parameter with commas before JSON.parse: one value only.
    const problem =
      values.length > 1 ? 'is given more than once' : values.length === 1 && !isJson(values[0] as string) ? 'is not valid JSON' : null;
    if (problem) return sendGraphQLError(res, new AppError('BAD_REQUEST', `The ${name} parameter ${problem}`));
  }
  next();
};
