import { randomUUID } from 'node:crypto';
import { errors, jwtVerify } from 'jose';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { ExpiringCache } from '../../core/expiring-cache.ts';
import { ACCESS_TOKEN_ALG, type SigningKeys } from './signing-keys.ts';

/** What an access token says (CONTRACT "Tokens and sessions"). */
export interface AccessClaims {
  sub: string;
  tid: string;
  sid: string;
  roles: string[];
}

/** A token whose signature checked: its claims, and the `kid` of the key that signed it. */
export interface VerifiedAccessToken {
  claims: AccessClaims;
  kid: string;
}

export interface AccessTokenIssuer {
  keys: SigningKeys;
  clock: Clock;
  issuer: string;
  ttlSeconds: number;
}

/** Claims that only the service sets; a custom claim of the same name is dropped. */
const OWN_CLAIMS = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'tid', 'sid', 'roles', 'typ']);

/**
 * Signs an access token. `custom` claims (added by the workspace's actions) ride along, never in place
 * of the service's own; verification reads only the service's own.
 */
export async function signAccessToken(
  issuer: AccessTokenIssuer,
  claims: AccessClaims,
  custom: Record<string, unknown> | null = null,
): Promise<string> {
  const { sign } = await issuer.keys.signingKey();
  const iat = Math.floor(issuer.clock.now().getTime() / 1000);
  const extra = custom ? Object.fromEntries(Object.entries(custom).filter(([name]) => !OWN_CLAIMS.has(name))) : {};
  return sign({
    ...extra,
    tid: claims.tid,
    sid: claims.sid,
    roles: claims.roles,
    iss: issuer.issuer,
    sub: claims.sub,
    iat,
    exp: iat + issuer.ttlSeconds,
    jti: randomUUID(),
  });
}

/**
 * Tokens whose signature this process has already checked, with their expiry and the key that
 * signed them. A client sends the same token many times; its signature cannot change, so only the
 * expiry, the key's revocation (a set lookup) and the live session (core/auth.ts) are checked again.
 * Bounded; oldest entries go first.
 */
const verified = new ExpiringCache<VerifiedAccessToken>(10_000);

/** Checks signature, algorithm, issuer and expiry; anything wrong is INVALID_TOKEN. */
export async function verifyAccessToken(issuer: AccessTokenIssuer, token: string): Promise<VerifiedAccessToken> {
  const known = verified.get(token, issuer.clock.now().getTime());
  if (known && !issuer.keys.isRevoked(known.kid)) return known;
  try {
    const { payload, protectedHeader } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid ? await issuer.keys.verificationKey(header.kid) : null;
        if (!key) throw new errors.JWKSNoMatchingKey();
        return key;
      },
      { issuer: issuer.issuer, algorithms: [ACCESS_TOKEN_ALG], currentDate: issuer.clock.now(), typ: 'at+jwt' },
    );
    const { sub, tid, sid, roles } = payload as Partial<AccessClaims>;
    if (typeof sub !== 'string' || typeof tid !== 'string' || typeof sid !== 'string' || !Array.isArray(roles)) {
      throw new AppError('INVALID_TOKEN', 'The access token is invalid, expired or revoked', { challenge: 'bearer' });
    }
    const checked = { claims: { sub, tid, sid, roles }, kid: protectedHeader.kid as string };
    verified.set(token, checked, (payload.exp as number) * 1000);
    return checked;
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof errors.JOSEError) {
      throw new AppError('INVALID_TOKEN', 'The access token is invalid, expired or revoked', { cause: error, challenge: 'bearer' });
    }
    throw error;
  }
}
