import { auditScope } from '../../core/audit-scope.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import {
  actionIdInput,
  actionOutput,
  actionPage,
  createActionInput,
  deployActionInput,
  listActionsInput,
  listTemplatesInput,
  templatePage,
  testActionInput,
  testResultOutput,
  updateActionInput,
} from './actions.schema.ts';
import {
  createAction,
  deleteAction,
  deployAction,
  getAction,
  listActions,
  listTemplates,
  testAction,
  updateAction,
} from './actions.service.ts';

const tags = ['actions'];

/** `templates` comes before `get`: the REST door matches in this order, and `templates` would fit `{id}`. */
export const actionsRouter = router({
  list: managementProcedure('actions:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/actions/', tags, summary: 'List actions', protect: true } })
    .input(listActionsInput)
    .output(actionPage)
    .query(({ ctx, input }) => listActions(ctx.em, input)),

  templates: managementProcedure('actions:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/actions/templates', tags, summary: 'List built-in action templates', protect: true } })
    .input(listTemplatesInput)
    .output(templatePage)
    .query(({ input }) => listTemplates(input)),

  get: managementProcedure('actions:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/actions/{id}', tags, summary: 'Get an action', protect: true } })
    .input(actionIdInput)
    .output(actionOutput)
    .query(({ ctx, input }) => getAction(ctx.em, input.id)),

  create: managementProcedure('actions:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/actions/',
        tags,
        summary: 'Create an action from code or a built-in template (a draft until deployed)',
        protect: true,
      },
      successStatus: 201,
      audit: 'action.create',
      conflict: 'An action with this name exists already',
    })
    .input(createActionInput)
    .output(actionOutput)
    .mutation(({ ctx, input }) => createAction(auditScope(ctx), input, ctx.deps.clock.now())),

  update: managementProcedure('actions:write')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/actions/{id}',
        tags,
        summary: 'Rename an action or save new code (a draft; the deployed version runs until the next deploy)',
        protect: true,
      },
      audit: 'action.update',
      conflict: 'An action with this name exists already',
    })
    .input(updateActionInput)
    .output(actionOutput)
    .mutation(({ ctx, input }) => updateAction(auditScope(ctx), input, ctx.deps.clock.now())),

  delete: managementProcedure('actions:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/actions/{id}', tags, summary: 'Delete an action', protect: true },
      audit: 'action.delete',
    })
    .input(actionIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteAction(auditScope(ctx), input.id)),

  deploy: managementProcedure('actions:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/actions/{id}/deploy',
        tags,
        summary: 'Deploy an action: compile its saved code; sign-ins then run it',
        protect: true,
      },
      audit: 'action.deploy',
      // The code is compiled before the transaction opens (actions.service.ts `deployAction`).
      ownTransaction: true,
    })
    .input(deployActionInput)
    .output(actionOutput)
    .mutation(({ ctx, input }) =>
      deployAction(ctx.deps.sandbox, ctx.em, (em) => ({ ...auditScope(ctx), em }), input.id, ctx.deps.clock.now()),
    ),

  test: managementProcedure('actions:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/actions/{id}/test',
        tags,
        summary: 'Test an action: run its saved code against a sample event (in `event`, or its parts at the top level)',
        protect: true,
      },
      audit: 'action.test',
      // The code runs in no transaction; its audit row is one write of its own (actions.service.ts `testAction`).
      ownTransaction: true,
    })
    .input(testActionInput)
    .output(testResultOutput)
    .mutation(({ ctx, input }) => testAction(ctx.deps.sandbox, auditScope(ctx), input)),
});
