import { z } from 'zod';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { labelInput } from '../../core/labels.ts';

export const apiKeyOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    created_at: z.string(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKeyView = z.infer<typeof apiKeyOutput>;
export const apiKeyPage = pageOf(apiKeyOutput);
export const listApiKeysInput = z.object({ ...pageParams }).prefault({});

/** The only time the secret is ever shown. */
export const createdApiKeyOutput = apiKeyOutput.extend({ key: z.string() }).meta({ id: 'CreatedApiKey' });

export const createApiKeyInput = z.strictObject({ name: labelInput(200) });
export const apiKeyIdInput = z.object({ id: z.string().max(100) });
