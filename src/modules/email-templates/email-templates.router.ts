import { auditScope } from '../../core/audit-scope.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import {
  emailTemplateOutput,
  emailTemplatePage,
  listEmailTemplatesInput,
  templateKeyInput,
  updateEmailTemplateInput,
} from './email-templates.schema.ts';
import { getEmailTemplate, listEmailTemplates, resetEmailTemplate, updateEmailTemplate } from './email-templates.service.ts';

const tags = ['customization'];

export const emailTemplatesRouter = router({
  list: managementProcedure('email_templates:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/email-templates/',
        tags,
        summary: 'List email templates: each key with its current subject and bodies, whether it is customized, and its variables',
        protect: true,
      },
    })
    .input(listEmailTemplatesInput)
    .output(emailTemplatePage)
    .query(({ ctx, input }) => listEmailTemplates(ctx.em, input)),

  get: managementProcedure('email_templates:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/email-templates/{key}', tags, summary: 'Get an email template', protect: true } })
    .input(templateKeyInput)
    .output(emailTemplateOutput)
    .query(({ ctx, input }) => getEmailTemplate(ctx.em, input.key)),

  update: managementProcedure('email_templates:write')
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/v1/email-templates/{key}',
        tags,
        summary: 'Update a template’s subject, HTML or text; parts not sent stay (Mustache; values are HTML-escaped in the HTML)',
        protect: true,
      },
      audit: 'email_template.update',
    })
    .input(updateEmailTemplateInput)
    .output(emailTemplateOutput)
    .mutation(({ ctx, input }) => updateEmailTemplate(auditScope(ctx), input, ctx.deps.clock.now())),

  reset: managementProcedure('email_templates:write')
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/email-templates/{key}',
        tags,
        summary: 'Drop the workspace’s version: the built-in template is sent again',
        protect: true,
      },
      audit: 'email_template.reset',
    })
    .input(templateKeyInput)
    .output(emailTemplateOutput)
    .mutation(({ ctx, input }) => resetEmailTemplate(auditScope(ctx), input.key)),
});
