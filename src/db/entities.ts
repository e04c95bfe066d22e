import { ActionSchema } from '../modules/actions/action.entity.ts';
import { ApiKeySchema } from '../modules/api-keys/api-key.entity.ts';
import { ApplicationSchema } from '../modules/applications/application.entity.ts';
import { AuditEventSchema } from '../modules/audit/audit.entity.ts';
import { PasswordResetTokenSchema, RefreshTokenSchema, SessionSchema } from '../modules/auth/session.entity.ts';
import { SigningKeySchema } from '../modules/auth/signing-key.entity.ts';
import { BrandingSchema } from '../modules/branding/branding.entity.ts';
import { CustomDomainSchema } from '../modules/domains/domain.entity.ts';
import { CustomEmailTemplateSchema } from '../modules/email-templates/email-template.entity.ts';
import { OutboxEmailSchema } from '../modules/email/email.entity.ts';
import { OutboxEventSchema } from '../modules/events/event.entity.ts';
import { GroupMemberSchema, GroupSchema } from '../modules/groups/group.entity.ts';
import { AccessRequestSchema, AccessReviewItemSchema, AccessReviewSchema } from '../modules/iga/iga.entity.ts';
import { InvitationSchema } from '../modules/invitations/invitation.entity.ts';
import { MfaChallengeSchema, MfaFactorSchema } from '../modules/mfa/mfa.entity.ts';
import { IdpAttributeSchema } from '../modules/idp-attributes/idp-attribute.entity.ts';
import { OrganizationDomainSchema, OrganizationMemberSchema, OrganizationSchema } from '../modules/organizations/organization.entity.ts';
import { SsoConnectionSchema } from '../modules/sso/sso-connection.entity.ts';
import { SocialProviderSchema } from '../modules/sso/social-provider.entity.ts';
import { WebhookAttemptSchema, WebhookDeliverySchema, WebhookEndpointSchema } from '../modules/webhooks/webhook.entity.ts';
import { RoleAssignmentSchema, RoleSchema } from '../modules/roles/role.entity.ts';
import { RiskScoreSchema, ThreatSettingsSchema } from '../modules/threat/threat.entity.ts';
import { UserSchema } from '../modules/users/user.entity.ts';
import { VaultObjectSchema } from '../modules/vault/vault.entity.ts';
import { WorkspaceSchema } from '../modules/workspaces/workspace.entity.ts';

/** Every entity the ORM knows. A module adds its schema here. */
export const entities = [
  WorkspaceSchema,
  UserSchema,
  ApiKeySchema,
  RoleSchema,
  RoleAssignmentSchema,
  AuditEventSchema,
  SigningKeySchema,
  SessionSchema,
  RefreshTokenSchema,
  PasswordResetTokenSchema,
  OutboxEmailSchema,
  MfaFactorSchema,
  MfaChallengeSchema,
  GroupSchema,
  GroupMemberSchema,
  InvitationSchema,
  OrganizationSchema,
  OrganizationDomainSchema,
  OrganizationMemberSchema,
  SsoConnectionSchema,
  IdpAttributeSchema,
  SocialProviderSchema,
  ApplicationSchema,
  OutboxEventSchema,
  RiskScoreSchema,
  ThreatSettingsSchema,
  VaultObjectSchema,
  AccessRequestSchema,
  AccessReviewSchema,
  AccessReviewItemSchema,
  WebhookEndpointSchema,
  WebhookDeliverySchema,
  WebhookAttemptSchema,
  BrandingSchema,
  CustomDomainSchema,
  CustomEmailTemplateSchema,
  ActionSchema,
];
