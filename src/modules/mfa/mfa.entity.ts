import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export const FACTOR_STATUSES = ['Pending verification', 'Verified'] as const;
export type FactorStatus = (typeof FACTOR_STATUSES)[number];

/** An authenticator app of a user. The secret is sealed under the master key and never shown again. */
export class MfaFactor {
  id!: string;
  workspaceId!: string;
  userId!: string;
  name!: string;
  kind!: 'totp';
  status!: FactorStatus;
  secret!: string;
  createdAt!: Date;
  verifiedAt!: Date | null;
}

export const MfaFactorSchema = new EntitySchema<MfaFactor>({
  class: MfaFactor,
  tableName: 'mfa_factors',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    userId: { type: 'string' },
    name: { type: 'string' },
    kind: { type: 'string' },
    status: { type: 'string' },
    secret: { type: 'string', lazy: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    verifiedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});

/** A sign-in waiting for its second factor: `mfa_token` (stored as SHA-256), 5 minutes, single use. */
export class MfaChallenge {
  id!: string;
  workspaceId!: string;
  userId!: string;
  tokenHash!: string;
  createdAt!: Date;
  expiresAt!: Date;
  usedAt!: Date | null;
  /** Custom access-token claims from the workspace's actions, for the session the answer opens. */
  claims!: Record<string, unknown> | null;
}

export const MfaChallengeSchema = new EntitySchema<MfaChallenge>({
  class: MfaChallenge,
  tableName: 'mfa_challenges',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    userId: { type: 'string' },
    tokenHash: { type: 'string', unique: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    expiresAt: { type: 'Date', columnType: 'timestamptz' },
    usedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    claims: { type: 'json', nullable: true },
  },
});
