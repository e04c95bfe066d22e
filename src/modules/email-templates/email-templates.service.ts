import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { toPage, type PageQuery } from '../../core/pagination.ts';
import { brandingOf } from '../branding/branding.service.ts';
import {
  checkTemplate,
  DEFAULT_TEMPLATES,
  isTemplateKey,
  TEMPLATE_CATALOG,
  TEMPLATE_KEYS,
  variablesOf,
  type EmailTemplate,
  type PreparedTemplate,
  type TemplateKey,
} from '../email/templates.ts';
import { textFromHtml } from '../email/text-from-html.ts';
import { CustomEmailTemplate } from './email-template.entity.ts';
import { differs } from '../../core/patch.ts';
import type { EmailTemplateView, UpdateEmailTemplateInput } from './email-templates.schema.ts';

function toView(key: TemplateKey, row: CustomEmailTemplate | null): EmailTemplateView {
  const source: EmailTemplate = row ? { subject: row.subject, html: row.htmlBody, text: row.textBody } : DEFAULT_TEMPLATES[key];
  return {
    key,
    description: TEMPLATE_CATALOG[key].description,
    subject: source.subject,
    html: source.html,
    text: source.text,
    customized: row !== null,
    variables: Object.entries(variablesOf(key)).map(([name, description]) => ({ name, description })),
    updated_at: row?.updatedAt.toISOString() ?? null,
  };
}

function knownKey(key: string): TemplateKey {
  if (!isTemplateKey(key)) throw new AppError('NOT_FOUND', `No email template has the key "${key}"`);
  return key;
}

/** Every known template, in a fixed order, with the workspace's version where it has one. */
export async function listEmailTemplates(em: EntityManager, query: PageQuery) {
  const rows = new Map((await em.find(CustomEmailTemplate, { key: { $in: TEMPLATE_KEYS } })).map((r) => [r.key, r]));
  const all = TEMPLATE_KEYS.map((key) => toView(key, rows.get(key) ?? null));
  const start = (query.page - 1) * query.per_page;
  return toPage(all.slice(start, start + query.per_page), all.length, query);
}

export async function getEmailTemplate(em: EntityManager, key: string): Promise<EmailTemplateView> {
  const known = knownKey(key);
  return toView(known, await em.findOne(CustomEmailTemplate, { key: known }));
}

/**
 * The text part when none was sent: a text the workspace wrote stays; the built-in one, or one made
 * from the HTML before, follows new HTML (Auth0 has a single `body`), so both parts say the same.
 */
function textFor(key: TemplateKey, current: EmailTemplateView, newHtml: string | undefined): string {
  const follows = current.text === DEFAULT_TEMPLATES[key].text || current.text === textFromHtml(current.html);
  if (newHtml === undefined || !follows) return current.text;
  return textFromHtml(newHtml) || current.text;
}

/**
 * Saves the workspace's version after checking it parses and uses only the template's variables
 * (400 with one detail per problem); the next email of that kind is rendered from it. Parts left out
 * are kept as the template has them now (the workspace's version, else the built-in one), except a
 * built-in text part, which new HTML replaces (textFor).
 */
export async function updateEmailTemplate(scope: AuditScope, input: UpdateEmailTemplateInput, now: Date): Promise<EmailTemplateView> {
  const key = knownKey(input.key);
  const current = toView(key, await scope.em.findOne(CustomEmailTemplate, { key }));
  const template: EmailTemplate = {
    subject: input.subject ?? current.subject,
    html: input.html ?? current.html,
    text: input.text ?? textFor(key, current, input.html),
  };
  const problems = checkTemplate(key, template);
  if (problems.length > 0) throw new AppError('BAD_REQUEST', 'The template cannot be used as written', { details: problems });
  // The workspace's version already reads so: nothing is written (core/patch.ts). Saving the built-in
  // text unchanged still makes it the workspace's own (`customized`), a change.
  if (current.customized && !differs(template, { subject: current.subject, html: current.html, text: current.text })) return current;
  // One statement, so two concurrent first saves of a key both succeed (the later one wins).
  const row = await scope.em.upsert(
    CustomEmailTemplate,
    {
      id: newId('etp'),
      workspaceId: scope.workspaceId,
      key,
      subject: template.subject,
      htmlBody: template.html,
      textBody: template.text,
      updatedAt: now,
    },
    { onConflictFields: ['workspaceId', 'key'], onConflictExcludeFields: ['id'] },
  );
  recordAudit(scope, { eventType: 'email_template.update', target: { type: 'email_template', id: key } });
  return toView(key, row);
}

/** Drops the workspace's version: the built-in template is sent again. Answers the template as it now is. */
export async function resetEmailTemplate(scope: AuditScope, key: string): Promise<EmailTemplateView> {
  const known = knownKey(key);
  const removed = await scope.em.nativeDelete(CustomEmailTemplate, { key: known });
  if (removed > 0) recordAudit(scope, { eventType: 'email_template.reset', target: { type: 'email_template', id: known } });
  return toView(known, null);
}

/**
 * The template a sender renders for `key`: the workspace's version when it has one, else the
 * built-in one, with the workspace's branding. Read in the sender's transaction, so an email queued
 * after an update commits uses the update.
 */
export async function emailTemplateFor<K extends TemplateKey>(
  em: EntityManager,
  workspaceId: string,
  key: K,
): Promise<PreparedTemplate<K>> {
  const row = await em.findOne(CustomEmailTemplate, { workspaceId, key }, { filters: false });
  const branding = await brandingOf(em, workspaceId);
  return {
    key,
    source: row ? { subject: row.subject, html: row.htmlBody, text: row.textBody } : DEFAULT_TEMPLATES[key],
    branding: {
      name: branding.name,
      logo_url: branding.logo_url,
      primary_color: branding.primary_color,
      background_color: branding.background_color,
      support_email: branding.support_email,
    },
  };
}
