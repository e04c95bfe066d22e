import type { EntityManager } from '@mikro-orm/postgresql';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30-second steps, 160-bit secrets. */
export const TOTP_PERIOD = 30;

export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/**
 * The key URI an authenticator app scans. Its label is `issuer:account`, split at the first colon, and
 * the issuer may hold none (Google's Key URI format), so a workspace named `Acme: Billing` is written
 * `Acme Billing`, in the label and the `issuer` parameter alike (apps want the two equal).
 */
export function totpUri(workspaceName: string, account: string, secret: string): string {
  const issuer = workspaceName.replace(/\s*:\s*/g, ' ').trim() || 'Sign-in';
  return generateURI({ issuer, label: account, secret, algorithm: 'sha1', digits: 6, period: TOTP_PERIOD });
}

export function qrCodeDataUri(uri: string): Promise<string> {
  return QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 1, width: 240 });
}

/** The time step a code belongs to, when it is right within one step either side; else null. */
export async function matchingStep(secret: string, code: string, now: Date): Promise<number | null> {
  const epoch = Math.floor(now.getTime() / 1000);
  const result = await verify({
    secret,
    token: code,
    algorithm: 'sha1',
    digits: 6,
    period: TOTP_PERIOD,
    epoch,
    epochTolerance: TOTP_PERIOD,
  });
  // `delta` is where the code matched, in steps from the current one.
  return result.valid ? Math.floor(epoch / TOTP_PERIOD) + result.delta : null;
}

/**
 * Spends a time step of one factor, atomically: a step no later than the last one spent is refused, so
 * a code works once, whichever request presents it. Each factor has its own secret, so its own steps.
 */
export async function spendStep(em: EntityManager, factorId: string, step: number): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    'update mfa_factors set last_step = ? where id = ? and (last_step is null or last_step < ?) returning id',
    [step, factorId, step],
  );
  return rows.length > 0;
}
