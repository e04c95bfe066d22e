import { z } from 'zod';
import { aliasOf, withAliases } from '../../core/aliases.ts';
import { isId } from '../../core/ids.ts';
import { instantInput } from '../../core/instant.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { DECISIONS, ENTITLEMENT_TYPES, REQUEST_STATUSES, REVIEW_SCOPES, REVIEW_STATUSES } from './iga.entity.ts';
import { absentIfNull } from '../../core/absent-if-null.ts';
import { labelInput } from '../../core/labels.ts';

const id = z.string().max(100);
const actor = z.object({ type: z.string(), id: z.string().nullable() });
const entitlementRef = z.object({ type: z.enum(ENTITLEMENT_TYPES), id: z.string(), name: z.string() });

/** Holders listed inline per entitlement; `holder_count` is always the full count. */
export const HOLDERS_SHOWN = 100;

export const entitlementOutput = z
  .object({
    id: z.string().describe('The role or group id; what access requests name'),
    type: z.enum(ENTITLEMENT_TYPES),
    name: z.string(),
    key: z.string().nullable().describe("The role's key; null for groups"),
    description: z.string().nullable(),
    holder_count: z.number().int(),
    holders: z
      .array(z.object({ user_id: z.string(), email: z.string(), granted_at: z.string(), expires_at: z.string().nullable() }))
      .describe(`Who holds it now, oldest grant first (at most ${HOLDERS_SHOWN})`),
  })
  .meta({ id: 'Entitlement' });
export type EntitlementView = z.infer<typeof entitlementOutput>;
export const entitlementPage = pageOf(entitlementOutput);
export const listEntitlementsInput = z.object({ type: z.enum(ENTITLEMENT_TYPES).optional(), ...pageParams }).prefault({});
export type ListEntitlementsInput = z.infer<typeof listEntitlementsInput>;

export const accessRequestOutput = z
  .object({
    id: z.string(),
    requester: z.object({ id: z.string(), email: z.string() }),
    entitlement: entitlementRef,
    justification: z.string().nullable().describe('null when the requester gave none'),
    status: z.enum(REQUEST_STATUSES),
    created_at: z.string(),
    decided_at: z.string().nullable(),
    decided_by: actor.nullable(),
    decision_reason: z
      .string()
      .nullable()
      .describe("The reason of a denial, the comment of an approval, or the requester's note on a cancellation"),
    expires_at: z.string().nullable().describe('Until when an approved grant lasts; null: no end'),
  })
  .meta({ id: 'AccessRequest' });
export type AccessRequestView = z.infer<typeof accessRequestOutput>;
export const accessRequestPage = pageOf(accessRequestOutput);

const justification = absentIfNull(z.string().trim().min(1).max(1000));
export const createRequestInput = withAliases(
  z.strictObject({
    entitlement_id: id.describe('A role id or key (such as `viewer`), or a group id'),
    justification: justification.describe('Why the requester needs it (optional)'),
    reason: justification.describe(aliasOf('justification', 'the name decisions use for their note')),
  }),
  { reason: 'justification' },
);
export const listRequestsInput = z
  .object({ status: z.enum(REQUEST_STATUSES).optional(), requester_id: id.optional(), entitlement_id: id.optional(), ...pageParams })
  .prefault({});
export type ListRequestsInput = z.infer<typeof listRequestsInput>;
export const requestIdInput = z.object({ id });
/** The decider's note on a decision: `reason` or `comment` (the same thing), both optional; both only when equal. */
const note = {
  reason: z.string().trim().min(1).max(1000).optional().describe('The note on the decision; comment is the same (send one, or both equal)'),
  comment: z.string().trim().min(1).max(1000).optional().describe('The same as reason'),
};
export const approveInput = z.strictObject({
  id,
  expires_at: instantInput.nullable().optional().describe('A time-bound grant ends then (roles only)'),
  ...note,
});
export const denyInput = z.strictObject({ id, ...note });
export const cancelInput = z.strictObject({ id, ...note });

export const reviewProgress = z.object({
  total: z.number().int(),
  decided: z.number().int(),
  kept: z.number().int(),
  revoked: z.number().int(),
  percent: z.number().int().min(0).max(100),
});

export const accessReviewOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: z.object({ type: z.enum(REVIEW_SCOPES), id: z.string().nullable(), name: z.string().nullable() }),
    status: z.enum(REVIEW_STATUSES),
    progress: reviewProgress,
    created_by: actor,
    created_at: z.string(),
    due_at: z.string().nullable(),
    completed_at: z.string().nullable(),
  })
  .meta({ id: 'AccessReview' });
export type AccessReviewView = z.infer<typeof accessReviewOutput>;
export const accessReviewPage = pageOf(accessReviewOutput);

const reviewScope = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('role'), id: id.describe('A role id or key') }),
  z.strictObject({ type: z.literal('group'), id }),
  z.strictObject({ type: z.literal('everyone') }),
]);
/** What a review may be scoped by: `scope`, or one of its shorthands. */
const SCOPE_FIELDS = ['scope', 'role_id', 'group_id', 'entitlement_id'] as const;

function shorthandScope(roleId?: string, groupId?: string, entitlementId?: string): z.infer<typeof reviewScope> {
  if (roleId !== undefined) return { type: 'role', id: roleId };
  if (groupId !== undefined) return { type: 'group', id: groupId };
  if (entitlementId !== undefined) return { type: isId('grp', entitlementId) ? 'group' : 'role', id: entitlementId };
  return { type: 'everyone' };
}

/**
 * `scope`, or instead one shorthand: `role_id` (`{type: role}`), `group_id` (`{type: group}`) or
 * `entitlement_id` (a role or group id: entitlements are roles and groups). None: everyone.
 */
export const startReviewInput = z
  .strictObject({
    name: labelInput(200),
    scope: reviewScope.optional().describe('Whose access is reviewed; default `{"type": "everyone"}`'),
    role_id: id
      .optional()
      .describe('Shorthand for `scope: {"type": "role", "id": role_id}` (a role id or key, such as `viewer`); send scope or one shorthand'),
    group_id: id.optional().describe('Shorthand for `scope: {"type": "group", "id": group_id}`; send scope or one shorthand'),
    entitlement_id: id
      .optional()
      .describe('Shorthand for the scope of that role or group (a role id or key, or a group id); send scope or one shorthand'),
    due_at: absentIfNull(instantInput),
  })
  .superRefine((value, ctx) => {
    const sent = SCOPE_FIELDS.filter((field) => value[field] !== undefined);
    for (const field of sent.slice(1)) {
      ctx.addIssue({ code: 'custom', path: [field], message: `send one of ${SCOPE_FIELDS.join(', ')}, not ${sent[0]} and ${field}` });
    }
  })
  .transform(({ role_id, group_id, entitlement_id, scope, ...rest }) => ({
    ...rest,
    scope: scope ?? shorthandScope(role_id, group_id, entitlement_id),
  }));
export type StartReviewInput = z.infer<typeof startReviewInput>;
export const listReviewsInput = z.object({ status: z.enum(REVIEW_STATUSES).optional(), ...pageParams }).prefault({});
export const reviewIdInput = z.object({ id });

export const ITEM_STATES = ['pending', ...DECISIONS] as const;

export const reviewItemOutput = z
  .object({
    id: z.string(),
    review_id: z.string(),
    user: z.object({ id: z.string(), email: z.string() }),
    entitlement: entitlementRef,
    grant_expires_at: z.string().nullable(),
    decision: z.enum(DECISIONS).nullable(),
    decided_by: actor.nullable(),
    decided_at: z.string().nullable(),
    comment: z.string().nullable(),
  })
  .meta({ id: 'AccessReviewItem' });
export type ReviewItemView = z.infer<typeof reviewItemOutput>;
export const reviewItemPage = pageOf(reviewItemOutput);
export const listItemsInput = z.object({ id, decision: z.enum(ITEM_STATES).optional(), ...pageParams });
export type ListItemsInput = z.infer<typeof listItemsInput>;

export const decideInput = z.strictObject({
  id,
  item_id: id,
  decision: z.enum(DECISIONS),
  comment: z.string().trim().min(1).max(1000).optional(),
});
export const decidedOutput = z.object({ item: reviewItemOutput, review: accessReviewOutput });
