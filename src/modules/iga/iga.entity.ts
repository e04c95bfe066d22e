import { EntitySchema } from '@mikro-orm/core';
import type { ActorType } from '../audit/audit.entity.ts';
import { tenantFilters } from '../../db/tenant.ts';

/**
 * What can be granted: a role, or membership of a group. Applications' access joins here when
 * applications exist (an `app_` id, the same requests and reviews).
 */
export const ENTITLEMENT_TYPES = ['role', 'group'] as const;
export type EntitlementType = (typeof ENTITLEMENT_TYPES)[number];

export const REQUEST_STATUSES = ['pending', 'approved', 'denied', 'cancelled'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/**
 * A signed-in user asks for an entitlement; an admin approves (the grant happens) or denies it, once,
 * unless the requester cancels it first.
 */
export class AccessRequest {
  id!: string;
  workspaceId!: string;
  requesterId!: string;
  requesterEmail!: string;
  entitlementType!: EntitlementType;
  entitlementId!: string;
  entitlementName!: string;
  /** Why the requester asks; null when they gave no reason. */
  justification!: string | null;
  status!: RequestStatus;
  decidedByType!: ActorType | null;
  decidedById!: string | null;
  decidedAt!: Date | null;
  decisionReason!: string | null;
  grantExpiresAt!: Date | null;
  createdAt!: Date;
}

export const AccessRequestSchema = new EntitySchema<AccessRequest>({
  class: AccessRequest,
  tableName: 'access_requests',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    requesterId: { type: 'string' },
    requesterEmail: { type: 'string' },
    entitlementType: { type: 'string' },
    entitlementId: { type: 'string' },
    entitlementName: { type: 'string' },
    justification: { type: 'text', nullable: true },
    status: { type: 'string' },
    decidedByType: { type: 'string', nullable: true },
    decidedById: { type: 'string', nullable: true },
    decidedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    decisionReason: { type: 'text', nullable: true },
    grantExpiresAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});

export const REVIEW_SCOPES = ['role', 'group', 'everyone'] as const;
export type ReviewScope = (typeof REVIEW_SCOPES)[number];
export const REVIEW_STATUSES = ['in_progress', 'completed'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export const DECISIONS = ['keep', 'revoke'] as const;
export type Decision = (typeof DECISIONS)[number];

/** A campaign over the grants of a scope as they were when it started; complete when every item is decided. */
export class AccessReview {
  id!: string;
  workspaceId!: string;
  name!: string;
  scopeType!: ReviewScope;
  scopeId!: string | null;
  scopeName!: string | null;
  status!: ReviewStatus;
  itemCount!: number;
  decidedCount!: number;
  keptCount!: number;
  revokedCount!: number;
  createdByType!: ActorType;
  createdById!: string | null;
  createdAt!: Date;
  dueAt!: Date | null;
  completedAt!: Date | null;
}

export const AccessReviewSchema = new EntitySchema<AccessReview>({
  class: AccessReview,
  tableName: 'access_reviews',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    scopeType: { type: 'string' },
    scopeId: { type: 'string', nullable: true },
    scopeName: { type: 'string', nullable: true },
    status: { type: 'string' },
    itemCount: { type: 'integer' },
    decidedCount: { type: 'integer' },
    keptCount: { type: 'integer' },
    revokedCount: { type: 'integer' },
    createdByType: { type: 'string' },
    createdById: { type: 'string', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    dueAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    completedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});

/** One grant under review: a user holding a role or a group membership. */
export class AccessReviewItem {
  id!: string;
  workspaceId!: string;
  reviewId!: string;
  userId!: string;
  userEmail!: string;
  entitlementType!: EntitlementType;
  entitlementId!: string;
  entitlementName!: string;
  grantExpiresAt!: Date | null;
  decision!: Decision | null;
  decidedByType!: ActorType | null;
  decidedById!: string | null;
  decidedAt!: Date | null;
  comment!: string | null;
  createdAt!: Date;
}

export const AccessReviewItemSchema = new EntitySchema<AccessReviewItem>({
  class: AccessReviewItem,
  tableName: 'access_review_items',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    reviewId: { type: 'string' },
    userId: { type: 'string' },
    userEmail: { type: 'string' },
    entitlementType: { type: 'string' },
    entitlementId: { type: 'string' },
    entitlementName: { type: 'string' },
    grantExpiresAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    decision: { type: 'string', nullable: true },
    decidedByType: { type: 'string', nullable: true },
    decidedById: { type: 'string', nullable: true },
    decidedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    comment: { type: 'text', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
