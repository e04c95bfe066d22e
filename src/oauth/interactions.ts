import type { EntityManager } from '@mikro-orm/postgresql';
import express, { type Request, type Response, type Router } from 'express';
import { errors as oidcErrors, type Client, type Interaction } from 'oidc-provider';
import { z } from 'zod';
import { originOfRequest, type AppDeps } from '../core/context.ts';
import { AppError } from '../core/errors.ts';
import { consumeRecordingFirstRefusal } from '../core/rate-limited-attempts.ts';
import { getRequestInfo } from '../core/request-info.ts';
import { TENANT_FILTER } from '../db/tenant.ts';
import { loginInput } from '../modules/auth/auth.schema.ts';
import { recordSessionlessSignIn, sessionlessFinish, signInWith } from '../modules/auth/sign-in.ts';
import { CHALLENGE_ANSWERED } from '../modules/auth/sessions.service.ts';
import { allowLogo, hostedBranding } from '../modules/branding/hosted.ts';
import { passSignInChallenge } from '../modules/mfa/mfa.service.ts';
import { Workspace } from '../modules/workspaces/workspace.entity.ts';
import { workspaceOf } from './clients.ts';
import { messagePage, PAGE_CSP, signInPage, totpPage, type Branding } from './pages.ts';
import { INTERACTION_PATH } from './provider.ts';

/*
 * The hosted sign-in of `/oauth/authorize`: oidc-provider redirects the browser here when it needs
 * the user to sign in. The user's workspace is the application's; the password and the second
 * factor go through the same sign-in pipeline as `POST /api/v1/auth/login` (lockout, deactivation,
 * audit rows, TOTP replay rules), which then opens no session of ours: the authorization server
 * keeps its own. The interaction cookie is SameSite=Lax, so a form posted from another site
 * finds no interaction (no CSRF token needed).
 */

const EXPIRED = 'This sign-in page has expired. Go back to the application and start again.';
const CHALLENGE_EXPIRED = 'Your sign-in expired before the code was entered. Sign in again.';

/** The code step's form: its challenge, the code (checked by the challenge: malformed ones count too), the address typed before. */
const mfaForm = z.object({
  mfa_token: z.string().min(1).max(512),
  code: z.string().max(64).catch(''),
  email: z.string().max(254).catch(''),
});

/**
 * Whether a refused code ended the second step, and what the sign-in page then says (the dashboard's
 * rule, web/hosted/sign-in/ended-challenge.ts, in its words): a challenge that can no longer be answered
 * (expired or used, out of its account's codes, the account locked or deactivated since the password)
 * goes back to the sign-in page of the same interaction; a wrong or malformed code stays (null).
 */
function endedChallenge(refusal: AppError): string | null {
  switch (refusal.appCode) {
    case 'INVALID_TOKEN':
      return CHALLENGE_EXPIRED;
    // Five codes in five minutes per account, the window opened by the first: signing in again within it
    // ends the same way, but waiting on a page whose every code is refused is worse.
    case 'RATE_LIMITED':
      return 'Too many codes were tried for this account. Wait a few minutes, then sign in again.';
    // The pipeline's own words, written for people: locked after failed sign-ins or by an admin, deactivated.
    case 'ACCOUNT_LOCKED':
    case 'ACCOUNT_DEACTIVATED':
      return refusal.message;
    default:
      return null;
  }
}

interface Context {
  interaction: Interaction;
  client: Client;
  workspaceId: string;
  branding: Branding;
}

/** `branding`: a page showing the workspace's logo may load it from the logo's origin, and only there. */
function html(res: Response, status: number, body: string, branding?: Branding): void {
  const csp = allowLogo(PAGE_CSP, branding?.logoUrl ?? null);
  res.status(status).set({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Security-Policy': csp });
  res.end(body);
}

type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: AppError };

function workspaceEm(deps: AppDeps, workspaceId: string): EntityManager {
  const em = deps.orm.em.fork();
  em.setFilterParams(TENANT_FILTER, { workspaceId });
  return em;
}

/**
 * One transaction, as a tRPC mutation has. A refusal (an AppError) comes back as a value for the page
 * to show; one that asks to keep its writes (the failed attempt's audit row, the lockout count)
 * commits them first, any other rolls back. Anything else is thrown.
 */
async function attempt<T>(deps: AppDeps, workspaceId: string, work: (em: EntityManager) => Promise<T>): Promise<Outcome<T>> {
  try {
    return await workspaceEm(deps, workspaceId).transactional(async (tx): Promise<Outcome<T>> => {
      try {
        return { ok: true, value: await work(tx) };
      } catch (error) {
        if (!(error instanceof AppError) || !error.keepChanges) throw error;
        await tx.flush();
        return { ok: false, refusal: error };
      }
    });
  } catch (error) {
    if (error instanceof AppError) return { ok: false, refusal: error };
    throw error;
  }
}

/**
 * A password sign-in, outside any transaction like the API's (auth/sign-in.ts keeps what it writes),
 * so no connection is held while Argon2id runs; a refusal comes back as a value, as from `attempt`.
 */
async function passwordAttempt<T>(deps: AppDeps, workspaceId: string, work: (em: EntityManager) => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await work(workspaceEm(deps, workspaceId)) };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, refusal: error };
    throw error;
  }
}

export function interactionRoutes(deps: AppDeps): Router {
  const { provider } = deps.oauth;
  const routes = express.Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  /** The interaction the cookie names, for the uid in the path, with its client and workspace; null when gone. */
  async function load(req: Request, res: Response): Promise<Context | null> {
    let interaction: Interaction;
    try {
      interaction = await provider.interactionDetails(req, res);
    } catch (error) {
      if (error instanceof oidcErrors.SessionNotFound) return null;
      throw error;
    }
    if (interaction.uid !== req.params.uid) return null;
    const clientId = interaction.params.client_id;
    const client = typeof clientId === 'string' ? await provider.Client.find(clientId) : undefined;
    const workspaceId = workspaceOf(client);
    if (!client || !workspaceId) return null;
    const em = deps.orm.em.fork();
    const workspace = await em.findOne(Workspace, { id: workspaceId });
    if (!workspace) return null;
    const brand = await hostedBranding(em, workspace);
    return {
      interaction,
      client,
      workspaceId,
      branding: {
        applicationName: client.clientName ?? 'Application',
        workspaceName: brand.name,
        logoUrl: brand.logoUrl,
        stylesheet: brand.stylesheet,
      },
    };
  }

  const paths = (uid: string) => ({
    login: `${INTERACTION_PATH}/${uid}/login`,
    mfa: `${INTERACTION_PATH}/${uid}/mfa`,
    abort: `${INTERACTION_PATH}/${uid}/abort`,
  });

  const loginPage = (res: Response, ctx: Context, status: number, extra: { email?: string; error?: string } = {}) => {
    const p = paths(ctx.interaction.uid);
    html(res, status, signInPage({ action: p.login, abort: p.abort, branding: ctx.branding, ...extra }), ctx.branding);
  };

  /** `email`: the address the password was given for, carried so that a sign-in sent back finds it filled in. */
  const codePage = (res: Response, ctx: Context, status: number, step: { mfaToken: string; email: string }, error?: string) => {
    const p = paths(ctx.interaction.uid);
    html(
      res,
      status,
      totpPage({ action: p.mfa, abort: p.abort, branding: ctx.branding, ...step, ...(error ? { error } : {}) }),
      ctx.branding,
    );
  };

  const loginHint = (ctx: Context): string | undefined => {
    const hint = ctx.interaction.params.login_hint;
    return typeof hint === 'string' ? hint.slice(0, 254) : undefined;
  };

  const expired = (res: Response) => html(res, 400, messagePage('Sign-in expired', EXPIRED));

  const signedIn = (req: Request, res: Response, accountId: string, amr: string[]) =>
    provider.interactionFinished(req, res, { login: { accountId, amr, remember: true } }, { mergeWithLastSubmission: false });

  routes.get(`${INTERACTION_PATH}/:uid`, async (req, res, next) => {
    try {
      const ctx = await load(req, res);
      if (!ctx) return expired(res);
      const { prompt, session, grantId } = ctx.interaction;
      if (prompt.name === 'login') {
        const hint = loginHint(ctx);
        return loginPage(res, ctx, 200, hint ? { email: hint } : {});
      }
      // Consent: every application is first-party to its workspace, so it is granted without asking.
      const accountId = session?.accountId;
      if (prompt.name !== 'consent' || !accountId) return expired(res);
      const found = grantId ? await provider.Grant.find(grantId) : undefined;
      const grant = found ?? new provider.Grant({ accountId, clientId: ctx.client.clientId });
      const details = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope);
      if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
      const consent = { grantId: await grant.save() };
      await provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
    } catch (error) {
      next(error);
    }
  });

  routes.post(`${INTERACTION_PATH}/:uid/login`, form, async (req, res, next) => {
    try {
      const ctx = await load(req, res);
      if (!ctx) return expired(res);
      const email = typeof req.body?.email === 'string' ? (req.body.email as string).slice(0, 254) : '';
      const decision = await consumeRecordingFirstRefusal(deps, getRequestInfo(req).ip, {
        workspaceId: ctx.workspaceId,
        eventType: 'auth.login',
        limit: 'login',
        origin: originOfRequest(req),
        email,
      });
      if (!decision.allowed) {
        return loginPage(res, ctx, 429, { email, error: 'Too many sign-in attempts; try again in a minute.' });
      }
      const parsed = loginInput.safeParse(req.body);
      if (!parsed.success) return loginPage(res, ctx, 400, { email, error: 'Enter your email address and password.' });
      const signIn = { workspaceId: ctx.workspaceId, ...parsed.data, origin: originOfRequest(req) };
      const outcome = await passwordAttempt(deps, ctx.workspaceId, (em) =>
        signInWith(deps, em, signIn, sessionlessFinish({ client_id: ctx.client.clientId })),
      );
      // Unknown email and wrong password read the same: the pipeline's own message.
      if (!outcome.ok) return loginPage(res, ctx, outcome.refusal.status, { email, error: outcome.refusal.message });
      if (outcome.value.kind === 'challenge') return codePage(res, ctx, 200, { mfaToken: outcome.value.challenge.mfa_token, email });
      await signedIn(req, res, outcome.value.userId, ['pwd']);
    } catch (error) {
      next(error);
    }
  });

  routes.post(`${INTERACTION_PATH}/:uid/mfa`, form, async (req, res, next) => {
    try {
      const ctx = await load(req, res);
      if (!ctx) return expired(res);
      const parsed = mfaForm.safeParse(req.body);
      const hint = loginHint(ctx);
      // No challenge named: nothing to answer, but the interaction goes on.
      if (!parsed.success) return loginPage(res, ctx, 400, { ...(hint ? { email: hint } : {}), error: CHALLENGE_EXPIRED });
      const { mfa_token: mfaToken, code } = parsed.data;
      const email = parsed.data.email || hint || '';
      const from = originOfRequest(req);
      const outcome = await attempt(deps, ctx.workspaceId, async (em) => {
        // Only a challenge of this application's workspace: another's is refused before its code limit is spent.
        const challenge = await passSignInChallenge(deps, em, mfaToken, code, from, ctx.workspaceId);
        const [user] = await em.execute<{ email: string }[]>('select email from users where id = ?', [challenge.userId]);
        const signIn = {
          workspaceId: ctx.workspaceId,
          userId: challenge.userId,
          email: user?.email ?? '',
          method: CHALLENGE_ANSWERED,
          origin: from,
          details: { client_id: ctx.client.clientId },
        };
        await recordSessionlessSignIn(em, signIn, deps.clock.now());
        return challenge.userId;
      });
      if (!outcome.ok) {
        const { refusal } = outcome;
        // A challenge that can no longer succeed: back to this interaction's sign-in page, saying why.
        const ended = endedChallenge(refusal);
        if (ended) return loginPage(res, ctx, refusal.status, { email, error: ended });
        const message = refusal.appCode === 'BAD_REQUEST' ? 'Enter the six-digit code from your authenticator app.' : refusal.message;
        return codePage(res, ctx, refusal.status, { mfaToken, email }, message);
      }
      await signedIn(req, res, outcome.value, ['pwd', 'otp', 'mfa']);
    } catch (error) {
      next(error);
    }
  });

  routes.post(`${INTERACTION_PATH}/:uid/abort`, async (req, res, next) => {
    try {
      const ctx = await load(req, res);
      if (!ctx) return expired(res);
      const result = { error: 'access_denied', error_description: 'The user cancelled the sign-in' };
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    } catch (error) {
      next(error);
    }
  });

  return routes;
}
