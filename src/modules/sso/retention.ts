import { DAY } from '../../core/clock.ts';
import { sweepOf } from '../../core/sweeper.ts';

/** Social and SSO sign-ins in flight, a day after both their state and their exchange code expired. */
export const externalSignInSweep = sweepOf('external_sign_ins', 'greatest(expires_at, code_expires_at) < $1', DAY);

/** Admin Portal links a day after both the link and the portal session it opened expired. */
export const portalLinkSweep = sweepOf('portal_links', 'greatest(expires_at, session_expires_at) < $1', DAY);
