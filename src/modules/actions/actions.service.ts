import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { Action, type ActionTrigger } from './action.entity.ts';
import type { ActionView, CreateActionInput, SampleEventInput, TestActionInput, TestResultView } from './actions.schema.ts';
import { SAMPLE_EVENT, type CompileProblem, type PostLoginEvent } from './isolate-runner.ts';
import type { ActionSandbox } from './sandbox.ts';
import { ACTION_TEMPLATES, findTemplate } from './templates.ts';
import { takenConflict } from '../../core/conflicts.ts';

function toView(action: Action): ActionView {
  return {
    id: action.id,
    name: action.name,
    trigger: action.trigger,
    code: action.code,
    status: action.status,
    deployed_version: action.deployedVersion,
    deployed_at: action.deployedAt?.toISOString() ?? null,
    created_at: action.createdAt.toISOString(),
    updated_at: action.updatedAt.toISOString(),
  };
}

/** The built-in templates, a page at a time, in the order ACTION_TEMPLATES declares them. */
export function listTemplates(query: PageQuery) {
  const { limit, offset } = offsetOf(query);
  return toPage(
    ACTION_TEMPLATES.slice(offset, offset + limit).map((t) => ({ ...t })),
    ACTION_TEMPLATES.length,
    query,
  );
}

export async function listActions(em: EntityManager, query: PageQuery & { trigger?: ActionTrigger }) {
  const where = query.trigger ? { trigger: query.trigger } : {};
  const [actions, total] = await em.findAndCount(Action, where, { orderBy: { id: 'asc' }, ...offsetOf(query) });
  return toPage(actions.map(toView), total, query);
}

/** `lock`: read FOR UPDATE, so of two deletes at once the later one waits and finds nothing (404). */
async function findAction(em: EntityManager, id: string, lock = false): Promise<Action> {
  const action = isId('act', id) ? await em.findOne(Action, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}) : null;
  if (!action) throw new AppError('NOT_FOUND', 'No such action');
  return action;
}

export async function getAction(em: EntityManager, id: string): Promise<ActionView> {
  return toView(await findAction(em, id));
}

async function ensureNameFree(em: EntityManager, workspaceId: string, name: string, except?: string): Promise<void> {
  const taken = await em.execute<{ id: string }[]>('select id from actions where workspace_id = ? and lower(name) = lower(?) and id <> ?', [
    workspaceId,
    name,
    except ?? '',
  ]);
  if (taken.length > 0) throw takenConflict('name', 'An action with this name already exists');
}

export async function createAction(scope: AuditScope, input: CreateActionInput, now: Date): Promise<ActionView> {
  if ((input.code === undefined) === (input.template === undefined)) {
    throw new AppError('BAD_REQUEST', 'Send either the code or a template', {
      details: [{ path: 'code', message: 'send exactly one of code and template' }],
    });
  }
  const template = input.template ? findTemplate(input.template) : null;
  const name = input.name ?? template?.name;
  if (!name) throw new AppError('BAD_REQUEST', 'The request is invalid', { details: [{ path: 'name', message: 'required with code' }] });
  if (template && template.trigger !== input.trigger) {
    throw new AppError('BAD_REQUEST', 'The request is invalid', {
      details: [{ path: 'trigger', message: `the template runs at ${template.trigger}` }],
    });
  }
  await ensureNameFree(scope.em, scope.workspaceId, name);
  const action = Object.assign(new Action(), {
    id: newId('act'),
    workspaceId: scope.workspaceId,
    name,
    trigger: input.trigger,
    code: template?.code ?? (input.code as string),
    status: 'draft' as const,
    deployedCode: null,
    deployedVersion: null,
    deployedAt: null,
    createdAt: now,
    updatedAt: now,
  });
  scope.em.persist(action);
  recordAudit(scope, {
    eventType: 'action.create',
    target: { type: 'action', id: action.id },
    details: { name, trigger: action.trigger, ...(template ? { template: template.key } : {}) },
  });
  return toView(action);
}

/** New code makes the action a draft; the deployed version keeps running until the next deploy. */
export async function updateAction(scope: AuditScope, input: { id: string; name?: string; code?: string }, now: Date): Promise<ActionView> {
  const action = await findAction(scope.em, input.id);
  const changed: string[] = [];
  if (input.name !== undefined && input.name !== action.name) {
    await ensureNameFree(scope.em, scope.workspaceId, input.name, action.id);
    action.name = input.name;
    changed.push('name');
  }
  if (input.code !== undefined && input.code !== action.code) {
    action.code = input.code;
    action.status = 'draft';
    changed.push('code');
  }
  if (changed.length > 0) {
    action.updatedAt = now;
    recordAudit(scope, { eventType: 'action.update', target: { type: 'action', id: action.id }, details: { changed } });
  }
  return toView(action);
}

export async function deleteAction(scope: AuditScope, id: string) {
  const action = await findAction(scope.em, id, true);
  scope.em.remove(action);
  recordAudit(scope, { eventType: 'action.delete', target: { type: 'action', id: action.id }, details: { name: action.name } });
  return { id: action.id, deleted: true as const };
}

function problemText(problem: CompileProblem): string {
  if (problem.line === null) return problem.message;
  const column = problem.column === null ? '' : `, column ${problem.column}`;
  return `line ${problem.line}${column}: ${problem.message}`;
}

/**
 * Compiles the saved code in a fresh isolate and runs its top level; when it is sound it becomes what
 * sign-ins run (a new deployed version). A syntax error is 400 with its line in `details`.
 */
export async function deployAction(
  sandbox: ActionSandbox,
  em: EntityManager,
  makeScope: (em: EntityManager) => AuditScope,
  id: string,
  now: Date,
): Promise<ActionView> {
  // Checked before any transaction opens: a sandbox starting up (a second or more) holds no database
  // connection (the embedded database has one, which every other request would wait for).
  const { code } = await findAction(em.fork(), id);
  const problem = await sandbox.check(code);
  if (problem) {
    const where = problem.line === null ? '' : ` on line ${problem.line}`;
    throw new AppError('BAD_REQUEST', `The action cannot be deployed: its code has an error${where}`, {
      details: [{ path: 'code', message: problemText(problem) }],
    });
  }
  return em.transactional((tx) => saveDeployment(makeScope(tx), id, code, now));
}

/** Deploys `code`, the code checked; new code saved meanwhile stays a draft, for the next deploy. */
async function saveDeployment(scope: AuditScope, id: string, code: string, now: Date): Promise<ActionView> {
  const action = await findAction(scope.em, id, true);
  Object.assign(action, {
    deployedCode: code,
    deployedVersion: (action.deployedVersion ?? 0) + 1,
    deployedAt: now,
    status: action.code === code ? 'deployed' : 'draft',
    updatedAt: now,
  });
  recordAudit(scope, {
    eventType: 'action.deploy',
    target: { type: 'action', id: action.id },
    details: { name: action.name, version: action.deployedVersion },
  });
  return toView(action);
}

/**
 * The sample event, with what the caller sent laid over the built-in sample user; Auth0's
 * `authorization.roles` is the user's roles (the input schema refuses both at once).
 */
function sampleEvent(workspaceId: string, { user, request, authorization }: SampleEventInput): PostLoginEvent {
  const roles = user?.roles ?? authorization?.roles;
  return {
    user: { ...SAMPLE_EVENT.user, ...user, ...(roles === undefined ? {} : { roles }) },
    request: { ...SAMPLE_EVENT.request, ...request },
    workspace: { id: workspaceId },
  };
}

/**
 * Runs the saved code (deployed or not) against a sample event, as a sign-in would run it. In no
 * transaction (the call's `ownTransaction`): the run, up to ACTION_TIMEOUT_MS, holds no database
 * connection; its audit row is written on its own after it.
 */
export async function testAction(sandbox: ActionSandbox, scope: AuditScope, { id, event }: TestActionInput): Promise<TestResultView> {
  const action = await findAction(scope.em, id);
  const outcome = await sandbox.runPostLogin(action.code, sampleEvent(scope.workspaceId, event));
  const denied = outcome.failure !== null || outcome.denied !== null;
  const result: TestResultView = {
    decision: denied ? 'deny' : 'allow',
    reason: outcome.failure ? `The action failed: ${outcome.failure.message}` : outcome.denied,
    claims: outcome.failure ? {} : (outcome.claims as TestResultView['claims']),
    require_second_factor: outcome.failure ? false : outcome.requireSecondFactor,
    logs: outcome.logs,
    duration_ms: outcome.durationMs,
    error: outcome.failure,
  };
  recordAudit(scope, {
    eventType: 'action.test',
    target: { type: 'action', id: action.id },
    details: { decision: result.decision, ...(outcome.failure ? { failure: outcome.failure.kind } : {}) },
  });
  await scope.em.flush();
  return result;
}
