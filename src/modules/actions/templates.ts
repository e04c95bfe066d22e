import type { ActionTrigger } from './action.entity.ts';

export interface ActionTemplate {
  key: string;
  name: string;
  description: string;
  trigger: ActionTrigger;
  code: string;
}

/** Built-in starting points, offered by `GET /api/v1/actions/templates` and `template` on create. */
export const ACTION_TEMPLATES = [
  {
    key: 'require-mfa-for-admins',
    name: 'Require a second factor for admins and owners',
    description:
      'Step-up: admins and owners must answer a second-factor challenge at every sign-in; one without a verified authenticator app is refused (MFA_ENROLLMENT_REQUIRED) until they enroll one.',
    trigger: 'post-login',
    code: `/**
 * Require a second factor for admins and owners.
 * @param {PostLoginEvent} event  who is signing in (event.user.roles are role keys)
 * @param {PostLoginApi} api      what the action may do
 * (Auth0's spellings work too: event.authorization.roles, api.multifactor.enable('any').)
 */
exports.onExecutePostLogin = async (event, api) => {
  const privileged = event.user.roles.some((role) => role === 'admin' || role === 'owner');
  if (privileged) {
    api.requireSecondFactor();
  }
};
`,
  },
] as const satisfies readonly ActionTemplate[];

export type TemplateKey = (typeof ACTION_TEMPLATES)[number]['key'];
export const TEMPLATE_KEYS = ACTION_TEMPLATES.map((t) => t.key) as [TemplateKey, ...TemplateKey[]];

export function findTemplate(key: TemplateKey): ActionTemplate {
  return ACTION_TEMPLATES.find((t) => t.key === key) as ActionTemplate;
}
