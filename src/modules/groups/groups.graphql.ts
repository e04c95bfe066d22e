import { builder, PageMetaRef } from '../../graphql/builder.ts';
import type { GroupView } from './groups.schema.ts';

export const GroupRef = builder.objectRef<GroupView>('Group').implement({
  description: 'A named set of users of the workspace.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description', { nullable: true }),
    memberCount: t.exposeInt('member_count'),
    createdAt: t.exposeString('created_at'),
  }),
});

const GroupPageRef = builder
  .objectRef<{ data: GroupView[]; meta: { total: number; page: number; per_page: number } }>('GroupPage')
  .implement({
    fields: (t) => ({
      data: t.field({ type: [GroupRef], resolve: (page) => page.data }),
      meta: t.field({ type: PageMetaRef, resolve: (page) => page.meta }),
    }),
  });

builder.queryFields((t) => ({
  groups: t.field({
    type: GroupPageRef,
    description: 'Groups of the workspace with their member counts, filtered by name.',
    args: { q: t.arg.string(), page: t.arg.int(), perPage: t.arg.int() },
    resolve: (_root, args, ctx) =>
      ctx.caller.groups.list({ q: args.q ?? undefined, page: args.page ?? undefined, per_page: args.perPage ?? undefined }),
  }),
}));
