import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../router.ts';

/** Every shape the dashboard handles comes from the server's router: nothing here is written by hand. */
export type Inputs = inferRouterInputs<AppRouter>;
export type Outputs = inferRouterOutputs<AppRouter>;

export type Tokens = Outputs['auth']['refresh'];
export type SignInResult = Outputs['auth']['login'];
export type Challenge = Extract<SignInResult, { mfa_required: true }>;
export type Me = Outputs['auth']['me'];
export type User = Outputs['users']['list']['data'][number];
export type UserStatus = User['status'];
export type UserRelations = Outputs['users']['relations'][number];
export type GroupOfUser = Outputs['groups']['ofUsers'][number]['groups'][number];
export type Role = Outputs['roles']['list']['data'][number];
export type Permission = Inputs['roles']['create']['permissions'] extends (infer P)[] | undefined ? P : never;
export type Group = Outputs['groups']['list']['data'][number];
export type Invitation = Outputs['invitations']['list']['data'][number];
export type InvitationStatus = Invitation['status'];
export type Organization = Outputs['organizations']['list']['data'][number];
export type SsoConnection = Outputs['organizations']['ssoConnection'];
export type Application = Outputs['applications']['list']['data'][number];
export type ApplicationType = Application['type'];
export type ApiKey = Outputs['apiKeys']['list']['data'][number];
export type Session = Outputs['auth']['sessions']['data'][number];
export type Factor = Outputs['mfa']['listFactors']['data'][number];
export type Enrollment = Outputs['mfa']['enrollTotp'];
export type SocialProvider = Outputs['sso']['providers']['data'][number];
export type AuditEvent = Outputs['audit']['list']['data'][number];
export type AuditListInput = Inputs['audit']['list'];
export type WebhookEndpoint = Outputs['webhooks']['list']['data'][number];
export type WebhookEventType = Outputs['webhooks']['eventTypes']['data'][number];
export type WebhookDelivery = Outputs['webhooks']['deliveries']['data'][number];
export type Action = Outputs['actions']['list']['data'][number];
export type ActionTemplate = Outputs['actions']['templates']['data'][number];
export type ActionTestResult = Outputs['actions']['test'];
export type SampleEvent = NonNullable<Inputs['actions']['test']['event']>;

export function isChallenge(result: SignInResult): result is Challenge {
  return 'mfa_required' in result;
}
