import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../core/ids.ts';
import { OutboxEmail } from './email.entity.ts';
import { renderTemplate, type TemplateKey } from './templates.ts';

export interface QueuedEmail {
  workspaceId: string | null;
  template: TemplateKey;
  to: string;
  vars: Record<string, string>;
}

/** Adds an email to the caller's transaction; the dispatcher sends it once that commits. */
export function queueEmail(em: EntityManager, email: QueuedEmail, now: Date): OutboxEmail {
  const rendered = renderTemplate(email.template, email.vars);
  const row = Object.assign(new OutboxEmail(), {
    id: newId('eml'),
    workspaceId: email.workspaceId,
    template: email.template,
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
