import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import type { Logger } from '../../core/logger.ts';
import { Workspace } from './workspace.entity.ts';
import type { CreatedWorkspace } from './workspaces.schema.ts';
import { createWorkspace } from './workspaces.service.ts';
import { lockUntilCommit } from '../../core/advisory-locks.ts';

/**
 * First start on an empty database: one workspace, its owner and a secret API key. Idempotent and
 * safe when several instances start at once (an advisory lock serialises them).
 */
export async function bootstrapFirstWorkspace(orm: MikroORM, config: Config): Promise<CreatedWorkspace | null> {
  return orm.em.fork().transactional(async (em) => {
    await lockUntilCommit(em, 'bootstrap');
    if ((await em.count(Workspace, {})) > 0) return null;
    return createWorkspace(
      em,
      {
        name: config.BOOTSTRAP_WORKSPACE_NAME,
        owner: { email: config.BOOTSTRAP_OWNER_EMAIL.toLowerCase(), password: config.BOOTSTRAP_OWNER_PASSWORD },
        apiKey: config.BOOTSTRAP_API_KEY,
      },
      { ip: null, userAgent: null, requestId: null },
    );
  });
}

export function printBootstrap(created: CreatedWorkspace, config: Config, log: Logger): void {
  const password = created.owner.password ?? config.BOOTSTRAP_OWNER_PASSWORD;
  const lines = [
    '',
    '  First start: a workspace was created. These secrets are shown once; keep them.',
    `    workspace id   ${created.workspace.id}`,
    `    secret API key ${created.api_key}`,
    `    owner email    ${created.owner.email}`,
    `    owner password ${password}`,
    `    dashboard      ${config.BASE_URL}/login?workspace=${created.workspace.id}`,
    `    try: curl -H "Authorization: Bearer ${created.api_key}" ${config.BASE_URL}/api/v1/users`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  log.info('bootstrap workspace created', { workspaceId: created.workspace.id, ownerEmail: created.owner.email });
}
