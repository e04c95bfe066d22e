import { builder, PageMetaRef } from '../../graphql/builder.ts';
import type { SessionView } from './auth.schema.ts';

const SessionRef = builder.objectRef<SessionView>('Session').implement({
  description: 'A signed-in device or browser of the caller.',
  fields: (t) => ({
    id: t.exposeID('id'),
    current: t.exposeBoolean('current', { description: 'True for the session of the token making this request' }),
    createdAt: t.exposeString('created_at'),
    lastRefreshedAt: t.exposeString('last_refreshed_at', { nullable: true }),
    expiresAt: t.exposeString('expires_at'),
    ip: t.exposeString('ip', { nullable: true }),
    userAgent: t.exposeString('user_agent', { nullable: true }),
  }),
});

const SessionPageRef = builder
  .objectRef<{ data: SessionView[]; meta: { total: number; page: number; per_page: number } }>('SessionPage')
  .implement({
    fields: (t) => ({
      data: t.field({ type: [SessionRef], resolve: (page) => page.data }),
      meta: t.field({ type: PageMetaRef, resolve: (page) => page.meta }),
    }),
  });

builder.queryFields((t) => ({
  mySessions: t.field({
    type: SessionPageRef,
    description: "The signed-in caller's live sessions, newest first.",
    args: { page: t.arg.int(), perPage: t.arg.int() },
    resolve: (_root, args, ctx) => ctx.caller.auth.sessions({ page: args.page ?? undefined, per_page: args.perPage ?? undefined }),
  }),
}));

builder.mutationFields((t) => ({
  revokeSession: t.boolean({
    description: "Ends one of the caller's sessions.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await ctx.caller.auth.revokeSession({ id: String(args.id) })).deleted,
  }),
}));
