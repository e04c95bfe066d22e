import type { AdapterPayload, Client } from 'oidc-provider';
import { isConfidential, type ApplicationType } from '../modules/applications/application.entity.ts';
import { grantTypesOf } from '../modules/applications/applications.service.ts';
import { ID_TOKEN_ALG } from '../modules/auth/signing-keys.ts';

/** The columns of `applications` a client is built from. */
export interface ApplicationRow {
  id: string;
  workspace_id: string;
  name: string;
  type: ApplicationType;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  secret_hash: string | null;
}

/** Extra client metadata: the workspace that owns the client, and so its users. */
export const WORKSPACE_METADATA = 'workspace';

/**
 * An application as oidc-provider's client metadata. `client_secret` is the stored SHA-256 digest, never
 * the secret: the provider compares a presented secret through `compareClientSecret`, which hashes it
 * first (oauth/provider.ts), and no HMAC algorithm is enabled that would use the secret as a key.
 */
export function clientMetadata(app: ApplicationRow): AdapterPayload {
  const confidential = isConfidential(app.type);
  return {
    client_id: app.id,
    client_name: app.name,
    [WORKSPACE_METADATA]: app.workspace_id,
    application_type: app.type === 'native' ? 'native' : 'web',
    redirect_uris: app.redirect_uris,
    post_logout_redirect_uris: app.post_logout_redirect_uris,
    grant_types: grantTypesOf(app.type),
    response_types: app.type === 'm2m' ? [] : ['code'],
    token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
    ...(confidential && app.secret_hash ? { client_secret: app.secret_hash } : {}),
    id_token_signed_response_alg: ID_TOKEN_ALG,
  };
}

/** The workspace a client belongs to. */
export function workspaceOf(client: Client | undefined): string | undefined {
  const value = client?.[WORKSPACE_METADATA];
  return typeof value === 'string' ? value : undefined;
}
