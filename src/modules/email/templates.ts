/**
 * Built-in email templates. `{{name}}` placeholders are filled from the variables; values are
 * HTML-escaped in the HTML part. The email-templates module will let a workspace override these.
 */
export interface EmailTemplate {
  subject: string;
  text: string;
  html: string;
}

export type TemplateKey = 'password_reset' | 'invitation' | 'access_request_created' | 'access_request_decided';

export const DEFAULT_TEMPLATES: Record<TemplateKey, EmailTemplate> = {
  password_reset: {
    subject: 'Reset your {{workspace_name}} password',
    text:
      'Someone asked to reset the password of your {{workspace_name}} account.\n\n' +
      'Choose a new password here (the link works once, for {{expires_minutes}} minutes):\n{{link}}\n\n' +
      'If it was not you, ignore this email: your password stays as it is.\n',
    html:
      '<p>Someone asked to reset the password of your {{workspace_name}} account.</p>' +
      '<p><a href="{{link}}">Choose a new password</a> (the link works once, for {{expires_minutes}} minutes).</p>' +
      '<p>If it was not you, ignore this email: your password stays as it is.</p>',
  },
  invitation: {
    subject: 'You are invited to {{workspace_name}}',
    text:
      'You have been invited to join {{workspace_name}}.\n\n' +
      'Accept and choose your password here (the link works once, for {{expires_days}} days):\n{{link}}\n',
    html:
      '<p>You have been invited to join {{workspace_name}}.</p>' +
      '<p><a href="{{link}}">Accept and choose your password</a> (the link works once, for {{expires_days}} days).</p>',
  },
  access_request_created: {
    subject: '{{requester_email}} asks for {{entitlement}} in {{workspace_name}}',
    text:
      '{{requester_email}} asks for access to {{entitlement}} in {{workspace_name}}.\n\n' +
      'Their reason: {{justification}}\n\n' +
      'Approve or deny request {{request_id}} in the dashboard (or POST /api/v1/iga/requests/{{request_id}}/approve or /deny).\n',
    html:
      '<p>{{requester_email}} asks for access to <strong>{{entitlement}}</strong> in {{workspace_name}}.</p>' +
      '<p>Their reason: {{justification}}</p>' +
      '<p>Approve or deny request <code>{{request_id}}</code> in the dashboard.</p>',
  },
  access_request_decided: {
    subject: 'Access to {{entitlement}} {{decision}}',
    text:
      'The request of {{requester_email}} for access to {{entitlement}} in {{workspace_name}} was {{decision}} by {{decided_by}}.\n\n' +
      '{{details}}\n',
    html:
      '<p>The request of {{requester_email}} for access to <strong>{{entitlement}}</strong> in {{workspace_name}} was ' +
      '<strong>{{decision}}</strong> by {{decided_by}}.</p><p>{{details}}</p>',
  },
};

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function fill(template: string, vars: Record<string, string>, escape: (v: string) => string): string {
  return template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (whole, name: string) => (name in vars ? escape(vars[name] as string) : whole));
}

export function renderTemplate(key: TemplateKey, vars: Record<string, string>): EmailTemplate {
  const template = DEFAULT_TEMPLATES[key];
  return {
    subject: fill(template.subject, vars, (v) => v),
    text: fill(template.text, vars, (v) => v),
    html: fill(template.html, vars, escapeHtml),
  };
}
