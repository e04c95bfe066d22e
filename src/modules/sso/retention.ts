import { DAY } from '../../core/clock.ts';
import { sweepOf } from '../../core/sweeper.ts';

/**
 * Social and SSO sign-ins in flight, a day after both their state and their exchange code expired,
 * through external_sign_ins_done_at_index.
 */
export const externalSignInSweep = sweepOf('external_sign_ins', 'greatest(expires_at, code_expires_at) < $1', DAY, {
  doneAt: 'greatest(expires_at, code_expires_at)',
});

/**
 * Admin Portal links a day after both the link and the portal session it opened expired, through
 * portal_links_done_at_index.
 */
export const portalLinkSweep = sweepOf('portal_links', 'greatest(expires_at, session_expires_at) < $1', DAY, {
  doneAt: 'greatest(expires_at, session_expires_at)',
});
