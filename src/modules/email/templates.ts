import Mustache, { type TemplateSpans } from 'mustache';
import type { FieldProblem } from '../../core/errors.ts';

/**
 * Built-in email templates, written in Mustache (logic-less): `{{name}}` is filled from the sender's
 * variables and, in the HTML part, HTML-escaped. A workspace may replace any of them through the
 * email-templates module; `renderEmail` renders whichever applies.
 */
export interface EmailTemplate {
  subject: string;
  text: string;
  html: string;
}

export type TemplateKey = 'password_reset' | 'invitation' | 'access_request_created' | 'access_request_decided';

export const DEFAULT_TEMPLATES: Record<TemplateKey, EmailTemplate> = {
  password_reset: {
    subject: 'Reset your {{branding.name}} password',
    text:
      'Someone asked to reset the password of your {{branding.name}} account.\n\n' +
      'Choose a new password here (the link works once, for {{expires_minutes}} minutes):\n{{link}}\n\n' +
      'If it was not you, ignore this email: your password stays as it is.\n',
    html:
      '{{#branding.logo_url}}<p><img src="{{branding.logo_url}}" alt="{{branding.name}}" height="48"></p>{{/branding.logo_url}}' +
      '<p>Someone asked to reset the password of your {{branding.name}} account.</p>' +
      '<p><a href="{{link}}">Choose a new password</a> (the link works once, for {{expires_minutes}} minutes).</p>' +
      '<p>If it was not you, ignore this email: your password stays as it is.</p>',
  },
  invitation: {
    subject: 'You are invited to {{branding.name}}',
    text:
      'You have been invited to join {{branding.name}}.\n\n' +
      'Accept and choose your password here (the link works once, for {{expires_days}} days):\n{{link}}\n',
    html:
      '{{#branding.logo_url}}<p><img src="{{branding.logo_url}}" alt="{{branding.name}}" height="48"></p>{{/branding.logo_url}}' +
      '<p>You have been invited to join {{branding.name}}.</p>' +
      '<p><a href="{{link}}">Accept and choose your password</a> (the link works once, for {{expires_days}} days).</p>',
  },
  access_request_created: {
    subject: '{{requester_email}} asks for {{entitlement}} in {{branding.name}}',
    text:
      '{{requester_email}} asks for access to {{entitlement}} in {{branding.name}}.\n\n' +
      'Their reason: {{justification}}\n\n' +
      'Approve or deny request {{request_id}} in the dashboard (or POST /api/v1/iga/requests/{{request_id}}/approve or /deny).\n',
    html:
      '{{#branding.logo_url}}<p><img src="{{branding.logo_url}}" alt="{{branding.name}}" height="48"></p>{{/branding.logo_url}}' +
      '<p>{{requester_email}} asks for access to <strong>{{entitlement}}</strong> in {{branding.name}}.</p>' +
      '<p>Their reason: {{justification}}</p>' +
      '<p>Approve or deny request <code>{{request_id}}</code> in the dashboard.</p>',
  },
  access_request_decided: {
    subject: 'Access to {{entitlement}} {{decision}}',
    text:
      'The request of {{requester_email}} for access to {{entitlement}} in {{branding.name}} was {{decision}} by {{decided_by}}.\n\n' +
      '{{details}}\n',
    html:
      '{{#branding.logo_url}}<p><img src="{{branding.logo_url}}" alt="{{branding.name}}" height="48"></p>{{/branding.logo_url}}' +
      '<p>The request of {{requester_email}} for access to <strong>{{entitlement}}</strong> in {{branding.name}} was ' +
      '<strong>{{decision}}</strong> by {{decided_by}}.</p><p>{{details}}</p>',
  },
};

/**
 * What each template is for and the variables its sender fills in: the only names a workspace's own
 * version may use, besides `branding.*`. A new key must be listed here (the type makes it so).
 */
export const TEMPLATE_CATALOG = {
  password_reset: {
    description: 'Sent after POST /api/v1/auth/password/forgot: a single-use link to choose a new password',
    variables: {
      link: 'The reset link ({base_url}/reset-password?token=…)',
      workspace_name: 'The workspace’s name',
      expires_minutes: 'How many minutes the link works (30)',
    },
  },
  invitation: {
    description: 'Sent after POST /api/v1/invitations and on resend: a link to join the workspace',
    variables: {
      link: 'The invitation link ({base_url}/accept-invitation?token=…)',
      workspace_name: 'The workspace’s name',
      expires_days: 'How many days the link works (7)',
    },
  },
  access_request_created: {
    description: 'Sent to the workspace’s approvers after POST /api/v1/iga/requests',
    variables: {
      workspace_name: 'The workspace’s name',
      requester_email: 'Who asked',
      entitlement: 'What they asked for (its type and name)',
      justification: 'Their reason',
      request_id: 'The request’s id (req_…)',
    },
  },
  access_request_decided: {
    description: 'Sent to the requester and the approver when a request is approved or denied',
    variables: {
      workspace_name: 'The workspace’s name',
      requester_email: 'Who asked',
      entitlement: 'What they asked for (its type and name)',
      decision: '`approved` or `denied`',
      decided_by: 'The approver’s email, or “an API key”',
      details: 'The approval’s expiry and comment, or the reason for denying',
    },
  },
} as const satisfies Record<TemplateKey, { description: string; variables: Record<string, string> }>;

export const TEMPLATE_KEYS = Object.keys(TEMPLATE_CATALOG) as TemplateKey[];

export function isTemplateKey(value: string): value is TemplateKey {
  return Object.hasOwn(TEMPLATE_CATALOG, value);
}

/** The variables a sender of `K` must pass. */
export type TemplateVars<K extends TemplateKey> = Record<keyof (typeof TEMPLATE_CATALOG)[K]['variables'], string>;

/** The workspace's branding, available to every template as `branding.*`. */
export interface BrandingVars {
  name: string;
  logo_url: string | null;
  primary_color: string;
  background_color: string;
  support_email: string | null;
}

export const BRANDING_VARIABLES: Record<`branding.${keyof BrandingVars}`, string> = {
  'branding.name': 'The name shown on hosted pages (the workspace’s name unless set)',
  'branding.logo_url': 'The logo’s https URL, empty without one (use it in {{#branding.logo_url}}…{{/branding.logo_url}})',
  'branding.primary_color': 'The primary color, #rrggbb',
  'branding.background_color': 'The background color, #rrggbb',
  'branding.support_email': 'The support address, empty without one',
};

/**
 * Other names of a template's variables, filled with the same value: Auth0's templates write
 * `{{ url }}` for the link. A workspace's version may use either name.
 */
const VARIABLE_ALIASES: Partial<Record<TemplateKey, Record<string, string>>> = {
  password_reset: { url: 'link' },
  invitation: { url: 'link' },
};

function aliasesOf(key: TemplateKey): Record<string, string> {
  return VARIABLE_ALIASES[key] ?? {};
}

/** Every variable `key` may use, with what it holds. */
export function variablesOf(key: TemplateKey): Record<string, string> {
  const aliases = Object.fromEntries(Object.entries(aliasesOf(key)).map(([alias, name]) => [alias, `Alias of {{${name}}} (Auth0’s name)`]));
  return { ...TEMPLATE_CATALOG[key].variables, ...aliases, ...BRANDING_VARIABLES };
}

/** A template as a sender holds it: the workspace's version or the built-in one, and the branding. */
export interface PreparedTemplate<K extends TemplateKey> {
  key: K;
  source: EmailTemplate;
  branding: BrandingVars;
}

/**
 * One writer whose cache is emptied after every use: parsing a short template costs microseconds,
 * while a cache keyed by every version of every workspace's templates would only grow.
 */
const writer = new Mustache.Writer();

function renderPart(template: string, view: object, escape: (value: string) => string): string {
  try {
    return writer.render(template, view, {}, { escape });
  } finally {
    writer.clearCache();
  }
}

const asIs = (value: string): string => value;

/** The subject and text as written (no escaping; a subject is one line); the HTML with every value escaped. */
export function renderEmail<K extends TemplateKey>(template: PreparedTemplate<K>, vars: TemplateVars<K>): EmailTemplate {
  const values: Record<string, string> = vars;
  const aliased = Object.fromEntries(Object.entries(aliasesOf(template.key)).map(([alias, name]) => [alias, values[name] ?? '']));
  const view = { ...aliased, ...vars, branding: template.branding };
  return {
    subject: renderPart(template.source.subject, view, asIs)
      .replace(/\s*[\r\n]+\s*/g, ' ')
      .trim(),
    text: renderPart(template.source.text, view, asIs),
    html: renderPart(template.source.html, view, Mustache.escape),
  };
}

type Part = keyof EmailTemplate;

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** Mustache's parse errors end with a character offset; people read lines. */
function parseProblem(part: Part, text: string, error: unknown): FieldProblem {
  const message = error instanceof Error ? error.message : String(error);
  const at = /^(.*) at (\d+)$/.exec(message);
  return { path: part, message: at ? `${at[1]} (${lineAndColumn(text, Number(at[2]))})` : message };
}

/**
 * Names each tag uses, checked against the variables `allowed`. Inside a section `{{#a}}…{{/a}}`,
 * a name may also be relative to it (`{{#branding}}{{name}}{{/branding}}`) or be `.`.
 */
function checkTokens(part: Part, text: string, tokens: TemplateSpans, allowed: Set<string>, sections: string[], out: FieldProblem[]) {
  for (const token of tokens) {
    const [type, name, start] = token;
    const where = lineAndColumn(text, start);
    if (type === '>') {
      out.push({ path: part, message: `Partials ({{> ${name}}}) are not supported (${where})` });
      continue;
    }
    if (type === '&' && part === 'html') {
      out.push({
        path: part,
        message: `{{{${name}}}} and {{&${name}}} would insert "${name}" without HTML escaping; write {{${name}}} (${where})`,
      });
      continue;
    }
    if (type === 'name' || type === '&' || type === '#' || type === '^') {
      const known =
        (name === '.' && sections.length > 0) ||
        allowed.has(name) ||
        sections.some((_, i) => allowed.has([...sections.slice(0, i + 1), name].join('.')));
      if (!known) {
        const names = [...allowed].filter((n) => n !== 'branding').join(', ');
        out.push({ path: part, message: `Unknown variable "${name}" (${where}); this template may use: ${names}` });
      }
    }
    if ((type === '#' || type === '^') && Array.isArray(token[4])) {
      checkTokens(part, text, token[4] as TemplateSpans, allowed, [...sections, name], out);
    }
  }
}

/**
 * Problems with a workspace's version of `key`: parse errors, unknown variables, partials, unescaped
 * values in the HTML, a multi-line subject. Empty means it renders as written.
 */
export function checkTemplate(key: TemplateKey, template: EmailTemplate): FieldProblem[] {
  const allowed = new Set(['branding', ...Object.keys(variablesOf(key))]);
  const problems: FieldProblem[] = [];
  if (/[\r\n]/.test(template.subject)) problems.push({ path: 'subject', message: 'A subject is one line' });
  for (const part of ['subject', 'html', 'text'] as const) {
    let tokens: TemplateSpans;
    try {
      tokens = writer.parse(template[part]) as TemplateSpans;
    } catch (error) {
      problems.push(parseProblem(part, template[part], error));
      continue;
    } finally {
      writer.clearCache();
    }
    checkTokens(part, template[part], tokens, allowed, [], problems);
  }
  return problems;
}
