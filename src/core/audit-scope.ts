import { actorOf, type AuditScope } from './audit.ts';
import type { Principal } from './auth.ts';
import type { Context } from './context.ts';

/** The audit scope of an authenticated request: its workspace, its caller and where it came from. */
export function auditScope(ctx: Context & { principal: Principal; workspaceId: string }): AuditScope {
  return {
    em: ctx.em,
    workspaceId: ctx.workspaceId,
    actor: actorOf(ctx.principal),
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    requestId: ctx.requestId,
  };
}
