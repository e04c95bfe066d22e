import { z } from 'zod';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { userOutput } from '../users/users.schema.ts';
import { emailInput } from '../users/users.schema.ts';
import { newPasswordInput, presentedPasswordInput } from './password-policy.ts';

export const loginInput = z.strictObject({ email: emailInput, password: presentedPasswordInput });

/** CONTRACT "Tokens and sessions": what a sign-in, an MFA completion and a refresh answer. */
export const tokensOutput = z
  .object({
    access_token: z.string(),
    refresh_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    user: userOutput,
  })
  .meta({ id: 'Tokens' });
export type TokensView = z.infer<typeof tokensOutput>;

export const refreshInput = z.strictObject({ refresh_token: z.string().min(1).max(512) });
/** Logout ends the access token's session; a client may send its refresh token along (see `logout`). */
export const logoutInput = z.strictObject({ refresh_token: z.string().min(1).max(512).optional() }).prefault({});

export const forgotInput = z.strictObject({ email: emailInput });
export const forgotOutput = z.object({ message: z.string() });

export const resetInput = z.strictObject({ token: z.string().min(1).max(512), password: newPasswordInput });
export const changeInput = z.strictObject({ current_password: presentedPasswordInput, new_password: newPasswordInput });

export const sessionOutput = z
  .object({
    id: z.string(),
    current: z.boolean(),
    created_at: z.string(),
    last_refreshed_at: z.string().nullable(),
    expires_at: z.string(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
  })
  .meta({ id: 'Session' });
export type SessionView = z.infer<typeof sessionOutput>;
export const sessionPage = pageOf(sessionOutput);
export const listSessionsInput = z.strictObject({ ...pageParams }).prefault({});

export const endedOutput = z.object({ ended_sessions: z.number().int() });
export const sessionIdInput = z.object({ id: z.string().max(100) });

/** Who the caller is, for a frontend deciding what to show: the user, their live roles and what those grant. */
export const meOutput = z
  .object({ user: userOutput, workspace_id: z.string(), roles: z.array(z.string()), permissions: z.array(z.string()) })
  .meta({ id: 'Me' });
