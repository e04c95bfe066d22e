import { builder } from '../../graphql/builder.ts';
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

builder.queryFields((t) => ({
  mySessions: t.field({
    type: [SessionRef],
    description: "The signed-in caller's live sessions.",
    resolve: (_root, _args, ctx) => ctx.caller.auth.sessions(),
  }),
}));

builder.mutationFields((t) => ({
  revokeSession: t.boolean({
    description: "Ends one of the caller's sessions.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await ctx.caller.auth.revokeSession({ id: String(args.id) })).deleted,
  }),
}));
