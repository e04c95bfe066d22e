import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export const INVITATION_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

/**
 * An invitation to join a workspace with a role; the invitee picks their own password. A pending one
 * always names its role; deleting the role revokes it, and any invitation then keeps its row with no role.
 */
export class Invitation {
  id!: string;
  workspaceId!: string;
  email!: string;
  roleId!: string | null;
  status!: InvitationStatus;
  tokenHash!: string;
  createdAt!: Date;
  expiresAt!: Date;
  lastSentAt!: Date;
  acceptedAt!: Date | null;
  userId!: string | null;
}

export const InvitationSchema = new EntitySchema<Invitation>({
  class: Invitation,
  tableName: 'invitations',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    email: { type: 'string' },
    roleId: { type: 'string', nullable: true },
    status: { type: 'string' },
    tokenHash: { type: 'string', unique: true, lazy: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    expiresAt: { type: 'Date', columnType: 'timestamptz' },
    lastSentAt: { type: 'Date', columnType: 'timestamptz' },
    acceptedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    userId: { type: 'string', nullable: true },
  },
});
