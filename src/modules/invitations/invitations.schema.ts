import { z } from 'zod';
import { aliasOf, withAliases } from '../../core/aliases.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { newPasswordInput } from '../auth/password-policy.ts';
import { emailInput } from '../users/users.schema.ts';
import { INVITATION_STATUSES } from './invitation.entity.ts';
import { nameInput } from '../users/names.ts';
import { absentIfNull } from '../../core/absent-if-null.ts';

export const invitationOutput = z
  .object({
    id: z.string(),
    email: z.string(),
    role_id: z.string().nullable().describe('null once the role was deleted (a pending invitation is then revoked)'),
    status: z.enum(INVITATION_STATUSES),
    created_at: z.string(),
    expires_at: z.string(),
    last_sent_at: z.string(),
    accepted_at: z.string().nullable(),
    user_id: z.string().nullable(),
  })
  .meta({ id: 'Invitation' });
export type InvitationView = z.infer<typeof invitationOutput>;

export const invitationPage = pageOf(invitationOutput);
export const listInvitationsInput = z.object({ status: z.enum(INVITATION_STATUSES).optional(), ...pageParams }).prefault({});
const roleIdOrKey = absentIfNull(z.string().max(100));
export const createInvitationInput = withAliases(
  z.strictObject({
    email: emailInput,
    role_id: roleIdOrKey.describe("The role's id or its key (such as `viewer`); default: `member`"),
    role: roleIdOrKey.describe(aliasOf('role_id', "the short name; a role's key or id")),
  }),
  { role: 'role_id' },
);
export const invitationIdInput = z.object({ id: z.string().max(100) });
export const acceptInvitationInput = z.strictObject({
  token: z.string().min(1).max(512),
  password: newPasswordInput,
  name: absentIfNull(nameInput),
});
