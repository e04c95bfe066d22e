import { Secret, TOTP } from 'otpauth';
import type { ManualClock } from '../../src/core/clock.ts';
import { authenticatorOf } from '../helpers/authenticator.ts';

/**
 * An authenticator app for the browser tests, on the test server's clock. The service accepts each
 * 30-second step once, so when the step of the clock's "now" has been used, the clock is moved to
 * the next step instead of the test waiting for it.
 */
export class TotpDevice {
  private readonly totp: TOTP;
  private lastStep = 0;

  constructor(
    secret: string,
    private readonly clock: ManualClock,
  ) {
    this.totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  }

  /** The device an enrollment's `otpauth_uri` sets up. */
  static fromUri(otpauthUri: string, clock: ManualClock): TotpDevice {
    return new TotpDevice(authenticatorOf(otpauthUri).secret.base32, clock);
  }

  nextCode(): string {
    const step = () => Math.floor(this.clock.now().getTime() / 30_000);
    if (step() <= this.lastStep) this.clock.advance((this.lastStep + 1 - step()) * 30_000);
    this.lastStep = step();
    return this.totp.generate({ timestamp: this.clock.now().getTime() });
  }
}
