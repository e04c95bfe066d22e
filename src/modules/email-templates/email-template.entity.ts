import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/** A workspace's own version of a built-in email template (by key); without a row the built-in one is sent. */
export class CustomEmailTemplate {
  id!: string;
  workspaceId!: string;
  key!: string;
  subject!: string;
  htmlBody!: string;
  textBody!: string;
  updatedAt!: Date;
}

export const CustomEmailTemplateSchema = new EntitySchema<CustomEmailTemplate>({
  class: CustomEmailTemplate,
  tableName: 'email_templates',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    key: { type: 'string' },
    subject: { type: 'string' },
    htmlBody: { type: 'text' },
    textBody: { type: 'text' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
