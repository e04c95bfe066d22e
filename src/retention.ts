import type { Sweep } from './core/sweeper.ts';
import { resetTokenSweep, sessionSweep } from './modules/auth/retention.ts';
import { outboxSweep } from './modules/email/retention.ts';
import { eventSweep } from './modules/events/retention.ts';
import { challengeSweep } from './modules/mfa/retention.ts';
import { externalSignInSweep, portalLinkSweep } from './modules/sso/retention.ts';
import { riskScoreSweep } from './modules/threat/retention.ts';
import { deliverySweep } from './modules/webhooks/retention.ts';
import { oidcSweep } from './oauth/adapter.ts';

/**
 * What the hourly retention sweep deletes (core/sweeper.ts), each module's own tables. Audit events
 * are not here: they are append-only (docs/decisions.md).
 */
export const SWEEPS: readonly Sweep[] = [
  sessionSweep,
  resetTokenSweep,
  challengeSweep,
  riskScoreSweep,
  eventSweep,
  deliverySweep,
  outboxSweep,
  externalSignInSweep,
  portalLinkSweep,
  oidcSweep,
];
