import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { authenticate } from '../core/auth.ts';
import type { AppDeps } from '../core/context.ts';
import { AppError } from '../core/errors.ts';

/** The introspection fields (`__typename` is not one: it names a type the caller already asked for). */
const NAMES_INTROSPECTION = /__(schema|type)\b/;
/** graphql's hints in validation messages: `… Did you mean "users"?` */
const SUGGESTION = / Did you mean [\s\S]*$/;

/** True for a credential that authenticates now; false for none, or one that is bad, expired or revoked. */
async function holdsValidCredential(deps: AppDeps, authorization: string | null): Promise<boolean> {
  if (!authorization) return false;
  try {
    await authenticate(deps, authorization);
    return true;
  } catch (error) {
    if (error instanceof AppError && (error.appCode === 'UNAUTHORIZED' || error.appCode === 'INVALID_TOKEN')) return false;
    throw error;
  }
}

/**
 * In production the schema is described only to callers with a valid credential: for anyone else
 * `__schema` and `__type` are refused at validation (graphql's NoSchemaIntrospectionCustomRule, so a
 * fragment or alias does not get around it) and validation messages lose their "Did you mean …"
 * hints, which would spell the field names out one guess at a time. In development and tests
 * everything stays open. The credential is checked only when it matters (the document names an
 * introspection field, or an error carries a hint), at most once per request.
 */
export function introspectionForCallers(deps: AppDeps): Plugin {
  if (deps.config.NODE_ENV !== 'production') return {};
  const checks = new WeakMap<Request, Promise<boolean>>();
  const checked = (request: Request): Promise<boolean> => {
    let check = checks.get(request);
    if (!check) {
      check = holdsValidCredential(deps, request.headers.get('authorization'));
      checks.set(request, check);
    }
    return check;
  };
  const trusted = new WeakMap<Request, boolean>();

  return {
    async onParams({ request, params }) {
      if (NAMES_INTROSPECTION.test(params.query ?? '')) trusted.set(request, await checked(request));
    },
    onValidate({ context, addValidationRule }) {
      if (trusted.get(context.request) !== true) addValidationRule(NoSchemaIntrospectionCustomRule);
    },
    async onResultProcess({ request, result, setResult }) {
      if (Symbol.asyncIterator in result || Array.isArray(result)) return;
      const errors = result.errors ?? [];
      if (!errors.some((error) => SUGGESTION.test(error.message))) return;
      if (await checked(request)) return;
      // New errors: the validation cache may hand the same error objects to the next caller.
      const withoutHints = errors.map((error) =>
        SUGGESTION.test(error.message)
          ? new GraphQLError(error.message.replace(SUGGESTION, ''), {
              nodes: error.nodes,
              source: error.source,
              positions: error.positions,
              path: error.path,
              originalError: error.originalError,
              extensions: error.extensions,
            })
          : error,
      );
      setResult({ ...result, errors: withoutHints });
    },
  };
}
