import { z } from 'zod';
import { aliasOf, withAliases } from '../../core/aliases.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { APPLICATION_TYPES, type ApplicationType } from './application.entity.ts';
import { MAX_REDIRECT_URIS } from './redirect-uris.ts';
import { labelInput } from '../../core/labels.ts';

export const applicationOutput = z
  .object({
    id: z.string(),
    /** The OAuth `client_id`: the application's id. */
    client_id: z.string(),
    name: z.string(),
    type: z.enum(APPLICATION_TYPES),
    redirect_uris: z.array(z.string()),
    /** Where RP-initiated logout (`/oauth/logout`) may send people back to. */
    post_logout_redirect_uris: z.array(z.string()),
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

const name = labelInput(200);
const redirectUris = z.array(z.string().max(4096)).max(MAX_REDIRECT_URIS);
const postLogoutRedirectUris = redirectUris.describe(
  'Where RP-initiated logout at `/oauth/logout` may send people back to (`post_logout_redirect_uri`, matched exactly); ' +
    'the rules of redirect_uris; none for m2m',
);

/**
 * Other services' names for the same kinds of application: Auth0's `app_type` values, and Logto's
 * types as its API spells them and in snake case. Taken on creation, stored and answered as the type
 * they name.
 */
export const APPLICATION_TYPE_ALIASES = {
  regular_web: 'web',
  non_interactive: 'm2m',
  traditional: 'web',
  machine_to_machine: 'm2m',
  Traditional: 'web',
  SPA: 'spa',
  Native: 'native',
  MachineToMachine: 'm2m',
} as const satisfies Record<string, ApplicationType>;

function isTypeAlias(type: string): type is keyof typeof APPLICATION_TYPE_ALIASES {
  return Object.hasOwn(APPLICATION_TYPE_ALIASES, type);
}

const typeInput = z
  .enum([...APPLICATION_TYPES, ...(Object.keys(APPLICATION_TYPE_ALIASES) as (keyof typeof APPLICATION_TYPE_ALIASES)[])])
  .transform((type): ApplicationType => (isTypeAlias(type) ? APPLICATION_TYPE_ALIASES[type] : type))
  .optional();

/** The list filters by type as creation names it: the aliases too. */
export const listApplicationsInput = z.object({ type: typeInput, ...pageParams }).prefault({});

export const createApplicationInput = withAliases(
  z.strictObject({
    name,
    type: typeInput.describe(
      'Default: `web` when redirect_uris is not empty, else `m2m` (both get a client secret). ' +
        "Aliases (stored and answered as the type they name): Auth0's `regular_web` and Logto's `Traditional` " +
        "(or `traditional`) are `web`; Auth0's `non_interactive` and Logto's `MachineToMachine` (or " +
        "`machine_to_machine`) are `m2m`; Logto's `SPA` and `Native` are `spa` and `native`",
    ),
    app_type: typeInput.describe(aliasOf('type', "Auth0's name")),
    redirect_uris: redirectUris.default([]),
    callbacks: redirectUris.optional().describe(aliasOf('redirect_uris', "Auth0's name")),
    post_logout_redirect_uris: postLogoutRedirectUris.default([]),
    allowed_logout_urls: postLogoutRedirectUris.optional().describe(aliasOf('post_logout_redirect_uris', "Auth0's name")),
  }),
  { app_type: 'type', callbacks: 'redirect_uris', allowed_logout_urls: 'post_logout_redirect_uris' },
);
export const updateApplicationInput = withAliases(
  z.strictObject({
    id: z.string().max(100),
    name: name.optional(),
    redirect_uris: redirectUris.optional(),
    callbacks: redirectUris.optional().describe(aliasOf('redirect_uris', "Auth0's name")),
    post_logout_redirect_uris: postLogoutRedirectUris.optional(),
    allowed_logout_urls: postLogoutRedirectUris.optional().describe(aliasOf('post_logout_redirect_uris', "Auth0's name")),
  }),
  { callbacks: 'redirect_uris', allowed_logout_urls: 'post_logout_redirect_uris' },
);
export const applicationIdInput = z.object({ id: z.string().max(100) });
