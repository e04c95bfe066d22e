import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError, type TRPCLink } from '@trpc/client';
import { observable, type Unsubscribable } from '@trpc/server/observable';
import { TRPC_MAX_BATCH_SIZE } from '../../core/trpc-batch.ts';
import type { AppRouter } from '../../router.ts';
import { tokenStore } from '../session/token-store.ts';

const url = '/trpc';

/** Calls that need no credential: sign-in, the second-factor challenge, refresh, reset, invitations. */
export const publicApi = createTRPCClient<AppRouter>({ links: [httpLink({ url })] });

/** `X-Tenant-ID` for the public calls about one workspace (sign-in, forgotten password, providers). */
export function tenantApi(workspaceId: string) {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url, headers: { 'x-tenant-id': workspaceId } })] });
}

let refreshing: Promise<string | null> | null = null;

/**
 * A fresh access token from the refresh token, one refresh at a time however many requests want one
 * (refresh tokens are single-use: two refreshes with one token would end the session). A refused
 * refresh token signs the tab out; a network failure leaves the tokens as they are.
 */
function refreshAccessToken(): Promise<string | null> {
  const refreshToken = tokenStore.refreshToken();
  if (!refreshToken) return Promise.resolve(null);
  refreshing ??= publicApi.auth.refresh
    .mutate({ refresh_token: refreshToken })
    .then(
      (tokens) => {
        tokenStore.save(tokens);
        return tokens.access_token;
      },
      (error: unknown) => {
        if (error instanceof TRPCClientError && error.data) tokenStore.refused();
        throw error;
      },
    )
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

async function currentAccessToken(): Promise<string | null> {
  return tokenStore.accessToken() ?? refreshAccessToken();
}

function appCodeOf(error: unknown): string | undefined {
  return error instanceof TRPCClientError ? (error.data as { appCode?: string } | undefined)?.appCode : undefined;
}

/**
 * Puts the access token on every call, refreshing it first when it has run out; a call refused with
 * INVALID_TOKEN (the token was revoked or its key rotated) is retried once after a refresh.
 */
const authLink: TRPCLink<AppRouter> =
  () =>
  ({ op, next }) =>
    observable((observer) => {
      let subscription: Unsubscribable | undefined;
      let stopped = false;
      const send = (retried: boolean) => {
        currentAccessToken().then(
          (token) => {
            if (stopped) return;
            subscription = next({ ...op, context: { ...op.context, token } }).subscribe({
              next: (value) => observer.next(value),
              error: (error) => {
                if (!retried && appCodeOf(error) === 'INVALID_TOKEN' && tokenStore.refreshToken()) {
                  tokenStore.dropAccessToken();
                  send(true);
                  return;
                }
                if (appCodeOf(error) === 'INVALID_TOKEN' || appCodeOf(error) === 'UNAUTHORIZED') tokenStore.refused();
                observer.error(error);
              },
              complete: () => observer.complete(),
            });
          },
          (error: unknown) => observer.error(TRPCClientError.from(error instanceof Error ? error : new Error(String(error)))),
        );
      };
      send(false);
      return () => {
        stopped = true;
        subscription?.unsubscribe();
      };
    });

/** The signed-in person's client. */
export const api = createTRPCClient<AppRouter>({
  links: [
    authLink,
    httpBatchLink({
      url,
      maxItems: TRPC_MAX_BATCH_SIZE,
      headers: ({ opList }) => {
        const token = opList[0]?.context.token;
        return typeof token === 'string' ? { authorization: `Bearer ${token}` } : {};
      },
    }),
  ],
});
