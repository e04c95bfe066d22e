import { EntitySchema } from '@mikro-orm/core';

/**
 * A token-signing key pair. The private half is sealed under the master key; `id` is the JWK `kid`.
 * Published from `createdAt`, signs from `activatedAt`, stops signing at `retiredAt`; a revoked key
 * (`revokedAt`, a leaked one) is neither published nor accepted any more.
 */
export class SigningKey {
  id!: string;
  alg!: string;
  publicJwk!: Record<string, unknown>;
  privateJwk!: string;
  createdAt!: Date;
  activatedAt!: Date;
  retiredAt!: Date | null;
  revokedAt!: Date | null;
}

export const SigningKeySchema = new EntitySchema<SigningKey>({
  class: SigningKey,
  tableName: 'signing_keys',
  properties: {
    id: { type: 'string', primary: true },
    alg: { type: 'string' },
    publicJwk: { type: 'json' },
    privateJwk: { type: 'string' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    activatedAt: { type: 'Date', columnType: 'timestamptz' },
    retiredAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    revokedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});
