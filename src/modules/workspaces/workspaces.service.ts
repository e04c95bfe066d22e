import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../core/audit.ts';
import { newId } from '../../core/ids.ts';
import { newSecret } from '../../core/secrets.ts';
import { issueApiKey } from '../api-keys/api-keys.service.ts';
import { addAssignment, seedBuiltinRoles } from '../roles/builtin-roles.ts';
import { newUser } from '../users/users.service.ts';
import { Workspace } from './workspace.entity.ts';
import type { CreatedWorkspace, CreateWorkspaceInput } from './workspaces.schema.ts';

export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

const SYSTEM: AuditActor = { type: 'system', id: null };

/**
 * A workspace with its built-in roles, an owner and a first secret API key, all in the caller's
 * transaction. The API key and a generated password are returned this once and never again.
 */
export async function createWorkspace(
  em: EntityManager,
  input: CreateWorkspaceInput & { apiKey?: string },
  origin: RequestOrigin,
): Promise<CreatedWorkspace> {
  const workspace = Object.assign(new Workspace(), { id: newId('wsp'), name: input.name, createdAt: new Date() });
  em.persist(workspace);
  const roles = seedBuiltinRoles(em, workspace.id);
  const generatedPassword = input.owner.password ? undefined : newSecret('', 18);
  const owner = await newUser(workspace.id, { email: input.owner.email, password: input.owner.password ?? (generatedPassword as string) });
  em.persist(owner);
  addAssignment(em, workspace.id, owner.id, (roles.get('owner') as { id: string }).id);
  const { key, secret } = issueApiKey(em, workspace.id, 'Default key', input.apiKey);

  const scope = { em, workspaceId: workspace.id, actor: SYSTEM, ...origin };
  recordAudit(scope, { eventType: 'workspace.create', target: { type: 'workspace', id: workspace.id } });
  recordAudit(scope, { eventType: 'user.create', target: { type: 'user', id: owner.id }, details: { email: owner.email, role: 'owner' } });
  recordAudit(scope, { eventType: 'api_key.create', target: { type: 'api_key', id: key.id } });
  await em.flush();

  return {
    workspace: { id: workspace.id, name: workspace.name },
    api_key: secret,
    owner: { id: owner.id, email: owner.email, ...(generatedPassword ? { password: generatedPassword } : {}) },
  };
}
