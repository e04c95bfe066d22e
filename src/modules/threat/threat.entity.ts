import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export const RISK_OUTCOMES = ['allowed', 'blocked', 'failure'] as const;
/** `allowed`: the password was right and the score under the threshold; `failure`: refused before scoring mattered. */
export type RiskOutcome = (typeof RISK_OUTCOMES)[number];

export interface RiskReason {
  code: string;
  points: number;
  /** How many earlier attempts the signal counted, when it counts. */
  count?: number;
}

/** The score of one sign-in attempt and why; written by the sign-in pipeline in the attempt's transaction. */
export class RiskScore {
  id!: string;
  workspaceId!: string;
  userId!: string | null;
  email!: string;
  ip!: string | null;
  userAgent!: string | null;
  score!: number;
  reasons!: RiskReason[];
  outcome!: RiskOutcome;
  failureReason!: string | null;
  lockedAccount!: boolean;
  /** The workspace's block threshold when the attempt was scored. */
  threshold!: number;
  createdAt!: Date;
}

export const RiskScoreSchema = new EntitySchema<RiskScore>({
  class: RiskScore,
  tableName: 'risk_scores',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    userId: { type: 'string', nullable: true },
    email: { type: 'string' },
    ip: { type: 'string', nullable: true },
    userAgent: { type: 'string', nullable: true },
    score: { type: 'integer' },
    reasons: { type: 'json' },
    outcome: { type: 'string' },
    failureReason: { type: 'string', nullable: true },
    lockedAccount: { type: 'boolean' },
    threshold: { type: 'integer' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});

/** A workspace's threat-detection settings; without a row the defaults apply. */
export class ThreatSettings {
  workspaceId!: string;
  blockThreshold!: number;
  blockingEnabled!: boolean;
  updatedAt!: Date;
}

export const ThreatSettingsSchema = new EntitySchema<ThreatSettings>({
  class: ThreatSettings,
  tableName: 'threat_settings',
  filters: tenantFilters,
  properties: {
    workspaceId: { type: 'string', primary: true },
    blockThreshold: { type: 'integer' },
    blockingEnabled: { type: 'boolean' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
