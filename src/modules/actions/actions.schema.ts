import { z } from 'zod';
import { aliasOf, withAliases } from '../../core/aliases.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { ACTION_STATUSES, ACTION_TRIGGERS } from './action.entity.ts';
import { TEMPLATE_KEYS } from './templates.ts';
import { labelInput } from '../../core/labels.ts';

/** 100 KiB of JavaScript is far more than a sign-in hook needs. */
export const MAX_CODE_CHARS = 100_000;

export const actionOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    trigger: z.enum(ACTION_TRIGGERS),
    /** The saved code; it runs at sign-in once deployed. */
    code: z.string(),
    /** `draft`: never deployed, or saved since the last deploy (the deployed version keeps running). */
    status: z.enum(ACTION_STATUSES),
    deployed_version: z.number().int().nullable(),
    deployed_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Action' });
export type ActionView = z.infer<typeof actionOutput>;

export const actionPage = pageOf(actionOutput);

export const templateOutput = z
  .object({ key: z.enum(TEMPLATE_KEYS), name: z.string(), description: z.string(), trigger: z.enum(ACTION_TRIGGERS), code: z.string() })
  .meta({ id: 'ActionTemplate' });
export const templatePage = pageOf(templateOutput);
export const listTemplatesInput = z.object({ ...pageParams }).prefault({});

const name = labelInput(200);
const code = z.string().min(1).max(MAX_CODE_CHARS);

export const listActionsInput = z.object({ trigger: z.enum(ACTION_TRIGGERS).optional(), ...pageParams }).prefault({});
export const actionIdInput = z.object({ id: z.string().max(100) });
export const deployActionInput = z.strictObject({ id: z.string().max(100) });

/** Either `code` (and a `name`), or a built-in `template` (its name unless one is given). */
export const createActionInput = z.strictObject({
  name: name.optional(),
  trigger: z.enum(ACTION_TRIGGERS).default('post-login'),
  code: code.optional(),
  template: z.enum(TEMPLATE_KEYS).optional(),
});
export type CreateActionInput = z.infer<typeof createActionInput>;

export const updateActionInput = z.strictObject({ id: z.string().max(100), name: name.optional(), code: code.optional() });

const roleKey = z.string().min(1).max(100);
const roles = z.array(roleKey).max(100);
const metadata = z.record(z.string(), z.json());

const sampleUser = withAliases(
  z.strictObject({
    id: z.string().max(100).optional(),
    user_id: z.string().max(100).optional().describe(aliasOf('id', "Auth0's name")),
    email: z.string().max(254).optional(),
    email_verified: z.boolean().optional(),
    name: z.string().max(200).nullable().optional(),
    roles: roles.optional(),
    metadata: metadata.optional(),
    app_metadata: metadata.optional().describe(aliasOf('metadata', "Auth0's name")),
    mfa_enabled: z.boolean().optional(),
  }),
  { user_id: 'id', app_metadata: 'metadata' },
);
const sampleRequest = z.strictObject({
  ip: z.string().max(100).nullable().optional(),
  user_agent: z.string().max(512).nullable().optional(),
});
const sampleAuthorization = z
  .strictObject({ roles: roles.optional() })
  .describe("Auth0's `event.authorization`: `roles` is an alias of `user.roles`");

const sampleParts = { user: sampleUser.optional(), request: sampleRequest.optional(), authorization: sampleAuthorization.optional() };

/** `authorization.roles` (Auth0's place) and `user.roles` name one list: one of them, not both. */
function oneRolesList(parts: { user?: { roles?: unknown }; authorization?: { roles?: unknown } }, ctx: z.RefinementCtx): void {
  if (parts.user?.roles !== undefined && parts.authorization?.roles !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['authorization', 'roles'], message: 'send user.roles or authorization.roles, not both' });
  }
}

/** A sample event for the test endpoint; what is left out comes from a built-in sample user. */
export const sampleEventInput = z.strictObject(sampleParts).superRefine(oneRolesList);
export type SampleEventInput = z.infer<typeof sampleEventInput>;

/**
 * The sample event goes in `event`; sent without `event`, its parts at the top level are the event
 * (`{"user": {...}}`, as Auth0's test payloads are shaped). Both at once is 400.
 */
export const testActionInput = z
  .strictObject({
    id: z.string().max(100),
    event: sampleEventInput.optional(),
    user: sampleParts.user.describe("Without `event`: the sample event's `user`"),
    request: sampleParts.request.describe("Without `event`: the sample event's `request`"),
    authorization: sampleParts.authorization.describe("Without `event`: the sample event's `authorization`"),
  })
  .superRefine((input, ctx) => {
    const flat = input.user !== undefined || input.request !== undefined || input.authorization !== undefined;
    if (input.event !== undefined && flat) {
      ctx.addIssue({ code: 'custom', path: ['event'], message: 'send user, request and authorization inside event, or without event' });
    }
    oneRolesList(input, ctx);
  })
  .transform(({ id, event, user, request, authorization }) => ({ id, event: event ?? { user, request, authorization } }));
export type TestActionInput = z.infer<typeof testActionInput>;

export const testResultOutput = z
  .object({
    /** `deny` when the code called `api.access.deny` or failed (a failing action refuses the sign-in). */
    decision: z.enum(['allow', 'deny']),
    reason: z.string().nullable(),
    claims: z.record(z.string(), z.json()),
    require_second_factor: z.boolean(),
    logs: z.array(z.object({ level: z.enum(['log', 'info', 'warn', 'error', 'debug']), message: z.string() })),
    duration_ms: z.number(),
    /** Why the run failed: `syntax`, `no_handler`, `threw`, `timeout`, `memory`, `unfinished`, `invalid_result`, `crashed`. */
    error: z.object({ kind: z.string(), message: z.string(), line: z.number().int().nullable() }).nullable(),
  })
  .meta({ id: 'ActionTestResult' });
export type TestResultView = z.infer<typeof testResultOutput>;
