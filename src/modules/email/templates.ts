/**
 * Built-in email templates. `{{name}}` placeholders are filled from the variables; values are
 * HTML-escaped in the HTML part. The email-templates module will let a workspace override these.
 */
export interface EmailTemplate {
  subject: string;
  text: string;
  html: string;
}

export type TemplateKey = 'password_reset' | 'invitation';

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
