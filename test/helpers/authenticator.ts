import { TOTP, URI } from 'otpauth';

/**
 * What an authenticator app makes of an enrollment's `otpauth_uri`: the tests' codes come from an
 * independent implementation (otpauth), read from the URI the service returned.
 */
export function authenticatorOf(otpauthUri: string): TOTP {
  const parsed = URI.parse(otpauthUri);
  if (!(parsed instanceof TOTP)) throw new Error(`not a TOTP URI: ${otpauthUri}`);
  return parsed;
}

/** The code `totp` shows at the clock's time, `steps` periods later (earlier when negative). */
export function codeAt(totp: TOTP, clock: { now(): Date }, steps = 0): string {
  return totp.generate({ timestamp: clock.now().getTime() + steps * totp.period * 1000 });
}
