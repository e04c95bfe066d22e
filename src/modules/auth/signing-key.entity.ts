import { EntitySchema } from '@mikro-orm/core';

/** A token-signing key pair. The private half is sealed under the master key; `id` is the JWK `kid`. */
export class SigningKey {
  id!: string;
  alg!: string;
  publicJwk!: Record<string, unknown>;
  privateJwk!: string;
  createdAt!: Date;
  retiredAt!: Date | null;
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
    retiredAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});
