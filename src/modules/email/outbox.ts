import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../core/ids.ts';
import { OutboxEmail } from './email.entity.ts';
import { renderEmail, type PreparedTemplate, type TemplateKey, type TemplateVars } from './templates.ts';

export interface QueuedEmail<K extends TemplateKey> {
  workspaceId: string | null;
  /** The workspace's version of the template or the built-in one: `emailTemplateFor` (email-templates module). */
  template: PreparedTemplate<K>;
  to: string;
  vars: TemplateVars<K>;
}

/** Adds an email to the caller's transaction; the dispatcher sends it once that commits. */
export function queueEmail<K extends TemplateKey>(em: EntityManager, email: QueuedEmail<K>, now: Date): OutboxEmail {
  const rendered = renderEmail(email.template, email.vars);
  const row = Object.assign(new OutboxEmail(), {
    id: newId('eml'),
    workspaceId: email.workspaceId,
    template: email.template.key,
    toAddress: email.to,
    subject: rendered.subject,
    textBody: rendered.text,
    htmlBody: rendered.html,
    status: 'pending' as const,
    attempts: 0,
    lastError: null,
    createdAt: now,
    // Delivery runs on the wall clock, whatever clock the domain uses.
    nextAttemptAt: new Date(),
    sentAt: null,
  });
  em.persist(row);
  return row;
}
