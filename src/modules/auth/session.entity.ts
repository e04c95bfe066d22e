import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/** One signed-in device or browser. Access tokens name it (`sid`) and die with it. */
export class Session {
  id!: string;
  workspaceId!: string;
  userId!: string;
  createdAt!: Date;
  lastRefreshedAt!: Date | null;
  expiresAt!: Date;
  endedAt!: Date | null;
  endReason!: string | null;
  ip!: string | null;
  userAgent!: string | null;
}

export const SessionSchema = new EntitySchema<Session>({
  class: Session,
  tableName: 'sessions',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    userId: { type: 'string' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    lastRefreshedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    expiresAt: { type: 'Date', columnType: 'timestamptz' },
    endedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    endReason: { type: 'string', nullable: true },
    ip: { type: 'string', nullable: true },
    userAgent: { type: 'string', nullable: true },
  },
});

/** A refresh token, stored as its SHA-256; single use, rotated on every refresh. */
export class RefreshToken {
  id!: string;
  workspaceId!: string;
  sessionId!: string;
  tokenHash!: string;
  createdAt!: Date;
  expiresAt!: Date;
  usedAt!: Date | null;
}

export const RefreshTokenSchema = new EntitySchema<RefreshToken>({
  class: RefreshToken,
  tableName: 'refresh_tokens',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    sessionId: { type: 'string' },
    tokenHash: { type: 'string', unique: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    expiresAt: { type: 'Date', columnType: 'timestamptz' },
    usedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});

/** A password-reset link's token, stored as its SHA-256; 30 minutes, single use. */
export class PasswordResetToken {
  id!: string;
  workspaceId!: string;
  userId!: string;
  tokenHash!: string;
  createdAt!: Date;
  expiresAt!: Date;
  usedAt!: Date | null;
}

export const PasswordResetTokenSchema = new EntitySchema<PasswordResetToken>({
  class: PasswordResetToken,
  tableName: 'password_reset_tokens',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    userId: { type: 'string' },
    tokenHash: { type: 'string', unique: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    expiresAt: { type: 'Date', columnType: 'timestamptz' },
    usedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});
