import { z } from 'zod';
import { aliasOf, withAliases } from '../../core/aliases.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { labelInput } from '../../core/labels.ts';

export const templateKeyInput = z.object({ key: z.string().max(100) });

export const listEmailTemplatesInput = z.object({ ...pageParams }).prefault({});

const templateBody = z.string().min(1).max(100_000);

/**
 * Any of `subject`, `html` (or its alias `body`, Auth0's name) and `text`; what is left out stays as
 * the template has it now.
 */
export const updateEmailTemplateInput = withAliases(
  z
    .strictObject({
      key: z.string().max(100),
      subject: labelInput(500).optional(),
      html: templateBody.optional(),
      body: templateBody.optional().describe(aliasOf('html', "Auth0's name")),
      text: templateBody.optional(),
    })
    .refine((v) => v.subject !== undefined || v.html !== undefined || v.text !== undefined, {
      message: 'send subject, html or text',
      path: ['subject'],
    }),
  { body: 'html' },
);
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
