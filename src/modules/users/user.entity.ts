import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export const USER_STATUSES = ['active', 'deactivated', 'locked'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** A person who signs in to a workspace. `passwordHash` never reaches an output schema. */
export class User {
  id!: string;
  workspaceId!: string;
  /** Stored lower-cased; unique per workspace. */
  email!: string;
  name!: string | null;
  status!: UserStatus;
  passwordHash!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
  lastSignInAt!: Date | null;
  /** Consecutive wrong passwords; the tenth locks the account for 15 minutes. */
  failedLoginCount!: number;
  lockedUntil!: Date | null;
  emailVerified!: boolean;
  /** Free JSON the workspace keeps about the user (at most 16 KiB). */
  metadata!: Record<string, unknown>;
}

export const UserSchema = new EntitySchema<User>({
  class: User,
  tableName: 'users',
  filters: tenantFilters,
  uniques: [{ properties: ['workspaceId', 'email'] }],
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string', nullable: true },
    status: { type: 'string' },
    passwordHash: { type: 'string', nullable: true, lazy: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
    lastSignInAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    failedLoginCount: { type: 'integer', default: 0 },
    lockedUntil: { type: 'Date', columnType: 'timestamptz', nullable: true },
    emailVerified: { type: 'boolean', default: false },
    metadata: { type: 'json' },
  },
});
