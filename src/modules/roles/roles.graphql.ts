import { builder, PageMetaRef } from '../../graphql/builder.ts';
import { defineLoader } from '../../graphql/loaders.ts';
import { CALLS_PROCEDURE } from '../../graphql/procedure-calls.ts';
import type { RoleView } from './roles.schema.ts';

const memberCounts = defineLoader(
  (ctx, ids: readonly string[]) => ctx.caller.roles.memberCounts({ ids: [...ids] }),
  (count) => count.role_id,
);

export const RoleRef = builder.objectRef<RoleView>('Role').implement({
  description: 'A built-in or custom role of the workspace.',
  fields: (t) => ({
    id: t.exposeID('id'),
    key: t.exposeString('key'),
    name: t.exposeString('name'),
    description: t.exposeString('description', { nullable: true }),
    builtin: t.exposeBoolean('builtin'),
    permissions: t.exposeStringList('permissions'),
    createdAt: t.exposeString('created_at'),
    memberCount: t.int({
      extensions: CALLS_PROCEDURE,
      description: 'Users holding the role now (expired assignments are not counted)',
      resolve: async (role, _args, ctx) => (await memberCounts(ctx).load(role.id)).members,
    }),
  }),
});

const RolePageRef = builder.objectRef<{ data: RoleView[]; meta: { total: number; page: number; per_page: number } }>('RolePage').implement({
  fields: (t) => ({
    data: t.field({ type: [RoleRef], resolve: (page) => page.data }),
    meta: t.field({ type: PageMetaRef, resolve: (page) => page.meta }),
  }),
});

builder.queryFields((t) => ({
  roles: t.field({
    type: RolePageRef,
    description: 'Roles of the workspace, built-ins first, with their member counts, filtered by name or description.',
    args: { q: t.arg.string(), page: t.arg.int(), perPage: t.arg.int() },
    resolve: (_root, args, ctx) =>
      ctx.caller.roles.list({ q: args.q ?? undefined, page: args.page ?? undefined, per_page: args.perPage ?? undefined }),
  }),
}));
