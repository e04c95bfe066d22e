import { z } from 'zod';
import { pageOf, pageParams } from '../../core/pagination.ts';

export const templateKeyInput = z.object({ key: z.string().max(100) });

export const listEmailTemplatesInput = z.object({ ...pageParams }).prefault({});

export const updateEmailTemplateInput = z.strictObject({
  key: z.string().max(100),
  subject: z.string().trim().min(1).max(500),
  html: z.string().min(1).max(100_000),
  text: z.string().min(1).max(100_000),
});
export type UpdateEmailTemplateInput = z.infer<typeof updateEmailTemplateInput>;

export const emailTemplateOutput = z
  .object({
    key: z.string(),
    description: z.string(),
    subject: z.string(),
    html: z.string(),
    text: z.string(),
    customized: z.boolean().describe('true when the workspace’s own version is sent instead of the built-in one'),
    variables: z.array(z.object({ name: z.string(), description: z.string() })),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'EmailTemplate' });
export type EmailTemplateView = z.infer<typeof emailTemplateOutput>;
export const emailTemplatePage = pageOf(emailTemplateOutput);
