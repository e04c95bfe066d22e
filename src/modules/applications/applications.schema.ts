import { z } from 'zod';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { APPLICATION_TYPES } from './application.entity.ts';
import { MAX_REDIRECT_URIS } from './redirect-uris.ts';

export const applicationOutput = z
  .object({
    id: z.string(),
    /** The OAuth `client_id`: the application's id. */
    client_id: z.string(),
    name: z.string(),
    type: z.enum(APPLICATION_TYPES),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.string()),
    token_endpoint_auth_method: z.enum(['client_secret_basic', 'none']),
    /** The first characters of the current secret (confidential types), to tell secrets apart. */
    client_secret_prefix: z.string().nullable(),
    secret_rotated_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Application' });
export type ApplicationView = z.infer<typeof applicationOutput>;

/** On creation and rotation only, and only for `web` and `m2m`: the secret, shown this once. */
export const applicationWithSecretOutput = applicationOutput
  .extend({ client_secret: z.string().optional() })
  .meta({ id: 'ApplicationWithSecret' });

export const applicationPage = pageOf(applicationOutput);

const name = z.string().trim().min(1).max(200);
const redirectUris = z.array(z.string().max(4096)).max(MAX_REDIRECT_URIS);

export const listApplicationsInput = z.object({ type: z.enum(APPLICATION_TYPES).optional(), ...pageParams }).prefault({});
export const createApplicationInput = z.strictObject({
  name,
  type: z
    .enum(APPLICATION_TYPES)
    .optional()
    .describe('Default: `web` when redirect_uris is not empty, else `m2m` (both get a client secret)'),
  redirect_uris: redirectUris.default([]),
});
export const updateApplicationInput = z.strictObject({
  id: z.string().max(100),
  name: name.optional(),
  redirect_uris: redirectUris.optional(),
});
export const applicationIdInput = z.object({ id: z.string().max(100) });
