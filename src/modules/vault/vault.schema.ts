import { z } from 'zod';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { absentIfNull } from '../../core/absent-if-null.ts';
import { labelInput } from '../../core/labels.ts';

/** A value may be up to 64 KiB of text (keys, certificates, connection strings). */
export const MAX_VALUE_BYTES = 65_536;

/** What lists and reads show: never the value, nor its length. */
export const vaultObjectOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    created_by: z.object({ type: z.string(), id: z.string().nullable() }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'VaultObject' });
export type VaultObjectView = z.infer<typeof vaultObjectOutput>;

export const vaultPage = pageOf(vaultObjectOutput);
export const listVaultInput = z.object({ ...pageParams }).prefault({});

export const createVaultObjectInput = z.strictObject({
  name: labelInput(200),
  description: absentIfNull(z.string().trim().max(500)),
  value: z
    .string()
    .min(1)
    .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_VALUE_BYTES, `must be at most ${MAX_VALUE_BYTES} bytes`),
});
export type CreateVaultObjectInput = z.infer<typeof createVaultObjectInput>;

export const vaultObjectIdInput = z.object({ id: z.string().max(100) });

export const revealedOutput = z.object({ id: z.string(), name: z.string(), value: z.string() }).meta({ id: 'RevealedVaultObject' });
