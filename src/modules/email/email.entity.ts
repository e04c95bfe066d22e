import { EntitySchema } from '@mikro-orm/core';

export type EmailStatus = 'pending' | 'sent' | 'failed';

/**
 * Outgoing mail, written in the transaction of the change that caused it and sent afterwards by the
 * dispatcher, so a request never waits on SMTP (and never reveals through its timing whether it sent).
 */
export class OutboxEmail {
  id!: string;
  workspaceId!: string | null;
  template!: string;
  toAddress!: string;
  subject!: string;
  textBody!: string;
  htmlBody!: string | null;
  status!: EmailStatus;
  attempts!: number;
  lastError!: string | null;
  createdAt!: Date;
  nextAttemptAt!: Date;
  sentAt!: Date | null;
}

export const OutboxEmailSchema = new EntitySchema<OutboxEmail>({
  class: OutboxEmail,
  tableName: 'email_outbox',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', nullable: true },
    template: { type: 'string' },
    toAddress: { type: 'string' },
    subject: { type: 'string' },
    textBody: { type: 'text' },
    htmlBody: { type: 'text', nullable: true },
    status: { type: 'string' },
    attempts: { type: 'integer' },
    lastError: { type: 'string', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    nextAttemptAt: { type: 'Date', columnType: 'timestamptz' },
    sentAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});
