import { z } from 'zod';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { absentIfNull } from '../../core/absent-if-null.ts';
import { labelInput, searchInput } from '../../core/labels.ts';

export const groupOutput = z
  .object({ id: z.string(), name: z.string(), description: z.string().nullable(), member_count: z.number().int(), created_at: z.string() })
  .meta({ id: 'Group' });
export type GroupView = z.infer<typeof groupOutput>;

export const groupPage = pageOf(groupOutput);
export const listGroupsInput = z.object({ q: searchInput.optional(), ...pageParams }).prefault({});
export const createGroupInput = z.strictObject({
  name: labelInput(100),
  description: absentIfNull(z.string().trim().max(500)),
});
export const groupIdInput = z.object({ id: z.string().max(100) });
export const updateGroupInput = z.strictObject({
  id: z.string().max(100),
  name: labelInput(100).optional(),
  description: z.string().trim().max(500).nullable().optional().describe('`null` clears it'),
});
export const listGroupMembersInput = z.object({ id: z.string().max(100), ...pageParams });
export const groupMemberOutput = z
  .object({ group_id: z.string(), user_id: z.string(), email: z.string(), name: z.string().nullable(), added_at: z.string() })
  .meta({ id: 'GroupMember' });
export type GroupMemberView = z.infer<typeof groupMemberOutput>;
export const groupMemberPage = pageOf(groupMemberOutput);
export const addMemberInput = z.strictObject({ id: z.string().max(100), user_id: z.string().max(100) });
export const removeMemberInput = z.object({ id: z.string().max(100), user_id: z.string().max(100) });
export const membershipOutput = z
  .object({ group_id: z.string(), user_id: z.string(), added_at: z.string() })
  .meta({ id: 'GroupMembership' });
