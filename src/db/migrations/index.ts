import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261125000000_foundation } from './Migration20261125000000_foundation.ts';
import { Migration20261126000000_sessions } from './Migration20261126000000_sessions.ts';
import { Migration20261126010000_mfa } from './Migration20261126010000_mfa.ts';
import { Migration20261126020000_groups } from './Migration20261126020000_groups.ts';
import { Migration20261126030000_invitations } from './Migration20261126030000_invitations.ts';
import { Migration20261126040000_user_profile } from './Migration20261126040000_user_profile.ts';
import { Migration20261126050000_user_search } from './Migration20261126050000_user_search.ts';
import { Migration20261126060000_applications } from './Migration20261126060000_applications.ts';
import { Migration20261126070000_audit_trail } from './Migration20261126070000_audit_trail.ts';
import { Migration20261126071000_threat } from './Migration20261126071000_threat.ts';
import { Migration20261126072000_vault } from './Migration20261126072000_vault.ts';
import { Migration20261126073000_governance } from './Migration20261126073000_governance.ts';
import { Migration20261126074000_audit_type_outcome } from './Migration20261126074000_audit_type_outcome.ts';
import { Migration20261126090000_organizations } from './Migration20261126090000_organizations.ts';
import { Migration20261126100000_actions } from './Migration20261126100000_actions.ts';
import { Migration20261126110000_customization } from './Migration20261126110000_customization.ts';
import { Migration20261126120000_webhooks } from './Migration20261126120000_webhooks.ts';
import { Migration20261126130000_hot_updates } from './Migration20261126130000_hot_updates.ts';
import { Migration20261126140000_builtin_role_names } from './Migration20261126140000_builtin_role_names.ts';
import { Migration20261126150000_factor_last_step } from './Migration20261126150000_factor_last_step.ts';
import { Migration20261127000000_deliveries_by_endpoint } from './Migration20261127000000_deliveries_by_endpoint.ts';
import { Migration20261127010000_oidc_account } from './Migration20261127010000_oidc_account.ts';
import { Migration20261128000000_user_identities } from './Migration20261128000000_user_identities.ts';
import { Migration20261128010000_invitation_role_set_null } from './Migration20261128010000_invitation_role_set_null.ts';
import { Migration20261129000000_request_justification_optional } from './Migration20261129000000_request_justification_optional.ts';
import { Migration20261130000000_post_logout_redirect_uris } from './Migration20261130000000_post_logout_redirect_uris.ts';
import { Migration20261201000000_canonical_emails } from './Migration20261201000000_canonical_emails.ts';
import { Migration20261201010000_nfc_user_names } from './Migration20261201010000_nfc_user_names.ts';
import { Migration20261201100000_access_request_cancelled } from './Migration20261201100000_access_request_cancelled.ts';
import { Migration20261201110000_deny_orphaned_requests } from './Migration20261201110000_deny_orphaned_requests.ts';
import { Migration20261202090000_session_sweep_index } from './Migration20261202090000_session_sweep_index.ts';

/**
 * Migrations in the order they apply. Listed explicitly (not globbed) so they run the same from tsx,
 * the CLI and tests. `npm run migration:create` writes a new file; add it here.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261125000000_foundation', class: Migration20261125000000_foundation },
  { name: 'Migration20261126000000_sessions', class: Migration20261126000000_sessions },
  { name: 'Migration20261126010000_mfa', class: Migration20261126010000_mfa },
  { name: 'Migration20261126020000_groups', class: Migration20261126020000_groups },
  { name: 'Migration20261126030000_invitations', class: Migration20261126030000_invitations },
  { name: 'Migration20261126040000_user_profile', class: Migration20261126040000_user_profile },
  { name: 'Migration20261126050000_user_search', class: Migration20261126050000_user_search },
  { name: 'Migration20261126060000_applications', class: Migration20261126060000_applications },
  { name: 'Migration20261126070000_audit_trail', class: Migration20261126070000_audit_trail },
  { name: 'Migration20261126071000_threat', class: Migration20261126071000_threat },
  { name: 'Migration20261126072000_vault', class: Migration20261126072000_vault },
  { name: 'Migration20261126073000_governance', class: Migration20261126073000_governance },
  { name: 'Migration20261126074000_audit_type_outcome', class: Migration20261126074000_audit_type_outcome },
  { name: 'Migration20261126090000_organizations', class: Migration20261126090000_organizations },
  { name: 'Migration20261126100000_actions', class: Migration20261126100000_actions },
  { name: 'Migration20261126110000_customization', class: Migration20261126110000_customization },
  { name: 'Migration20261126120000_webhooks', class: Migration20261126120000_webhooks },
  { name: 'Migration20261126130000_hot_updates', class: Migration20261126130000_hot_updates },
  { name: 'Migration20261126140000_builtin_role_names', class: Migration20261126140000_builtin_role_names },
  { name: 'Migration20261126150000_factor_last_step', class: Migration20261126150000_factor_last_step },
  { name: 'Migration20261127000000_deliveries_by_endpoint', class: Migration20261127000000_deliveries_by_endpoint },
  { name: 'Migration20261127010000_oidc_account', class: Migration20261127010000_oidc_account },
  { name: 'Migration20261128000000_user_identities', class: Migration20261128000000_user_identities },
  { name: 'Migration20261128010000_invitation_role_set_null', class: Migration20261128010000_invitation_role_set_null },
  { name: 'Migration20261129000000_request_justification_optional', class: Migration20261129000000_request_justification_optional },
  { name: 'Migration20261130000000_post_logout_redirect_uris', class: Migration20261130000000_post_logout_redirect_uris },
  { name: 'Migration20261201000000_canonical_emails', class: Migration20261201000000_canonical_emails },
  { name: 'Migration20261201010000_nfc_user_names', class: Migration20261201010000_nfc_user_names },
  { name: 'Migration20261201100000_access_request_cancelled', class: Migration20261201100000_access_request_cancelled },
  { name: 'Migration20261201110000_deny_orphaned_requests', class: Migration20261201110000_deny_orphaned_requests },
  { name: 'Migration20261202090000_session_sweep_index', class: Migration20261202090000_session_sweep_index },
];
