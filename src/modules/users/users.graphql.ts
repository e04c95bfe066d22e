import { builder, PageMetaRef } from '../../graphql/builder.ts';
import { USER_STATUSES } from './user.entity.ts';
import type { UserView } from './users.schema.ts';

const UserStatusRef = builder.enumType('UserStatus', { values: USER_STATUSES });

const MfaSummaryRef = builder.objectRef<{ verified: number; kinds: string[] }>('MfaSummary').implement({
  description: "A user's verified second factors: how many and of which kinds (never their secrets).",
  fields: (t) => ({
    verified: t.exposeInt('verified'),
    kinds: t.exposeStringList('kinds'),
  }),
});

export const UserRef = builder.objectRef<UserView>('User').implement({
  fields: (t) => ({
    mfa: t.field({ type: MfaSummaryRef, resolve: (user, _args, ctx) => ctx.caller.users.mfaSummary({ id: user.id }) }),
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    name: t.exposeString('name', { nullable: true }),
    status: t.field({ type: UserStatusRef, resolve: (user) => user.status }),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
    lastSignInAt: t.exposeString('last_sign_in_at', { nullable: true }),
    emailVerified: t.exposeBoolean('email_verified'),
    mfaEnabled: t.exposeBoolean('mfa_enabled'),
  }),
});

const UserPageRef = builder.objectRef<{ data: UserView[]; meta: { total: number; page: number; per_page: number } }>('UserPage').implement({
  fields: (t) => ({
    data: t.field({ type: [UserRef], resolve: (page) => page.data }),
    meta: t.field({ type: PageMetaRef, resolve: (page) => page.meta }),
  }),
});

const CreateUserInputRef = builder.inputType('CreateUserInput', {
  fields: (t) => ({
    email: t.string({ required: true }),
    password: t.string({ required: true }),
    name: t.string(),
  }),
});

builder.queryFields((t) => ({
  user: t.field({
    type: UserRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => ctx.caller.users.get({ id: String(args.id) }),
  }),
  users: t.field({
    type: UserPageRef,
    args: {
      q: t.arg.string(),
      status: t.arg({ type: UserStatusRef }),
      page: t.arg.int(),
      perPage: t.arg.int(),
    },
    resolve: (_root, args, ctx) =>
      ctx.caller.users.list({
        q: args.q ?? undefined,
        status: args.status ?? undefined,
        page: args.page ?? undefined,
        per_page: args.perPage ?? undefined,
      }),
  }),
}));

builder.mutationFields((t) => ({
  createUser: t.field({
    type: UserRef,
    args: { input: t.arg({ type: CreateUserInputRef, required: true }) },
    resolve: (_root, { input }, ctx) =>
      ctx.caller.users.create({ email: input.email, password: input.password, name: input.name ?? undefined }),
  }),
}));
