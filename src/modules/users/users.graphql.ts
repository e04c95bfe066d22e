import { builder, PageMetaRef } from '../../graphql/builder.ts';
import { defineLoader } from '../../graphql/loaders.ts';
import { CALLS_PROCEDURE } from '../../graphql/procedure-calls.ts';
import { RoleRef } from '../roles/roles.graphql.ts';
import type { GroupsOfUserView } from '../groups/groups-of-users.ts';
import type { UserRelationsView } from './user-relations.ts';
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

/** One batch call per page of users for their roles and factors (no N+1). */
const relations = defineLoader(
  (ctx, ids: readonly string[]) => ctx.caller.users.relations({ ids: [...ids] }),
  (row) => row.user_id,
);

/** One batch call per page of users for their groups, which needs `groups:read` besides `users:read`. */
const groupsOf = defineLoader(
  (ctx, ids: readonly string[]) => ctx.caller.groups.ofUsers({ ids: [...ids] }),
  (row) => row.user_id,
);

const UserRoleRef = builder.objectRef<UserRelationsView['roles'][number]>('UserRole').implement({
  description: 'A role the user holds now, and until when.',
  fields: (t) => ({
    role: t.field({ type: RoleRef, resolve: (held) => held.role }),
    expiresAt: t.exposeString('expires_at', { nullable: true }),
  }),
});

const UserGroupRef = builder.objectRef<GroupsOfUserView['groups'][number]>('UserGroup').implement({
  description: 'A group the user is a member of.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
  }),
});

export const UserRef = builder.objectRef<UserView>('User').implement({
  fields: (t) => ({
    mfa: t.field({
      extensions: CALLS_PROCEDURE,
      type: MfaSummaryRef,
      resolve: async (user, _args, ctx) => (await relations(ctx).load(user.id)).mfa,
    }),
    roles: t.field({
      extensions: CALLS_PROCEDURE,
      type: [UserRoleRef],
      resolve: async (user, _args, ctx) => (await relations(ctx).load(user.id)).roles,
    }),
    groups: t.field({
      extensions: CALLS_PROCEDURE,
      type: [UserGroupRef],
      nullable: true,
      description: 'The groups the user is a member of; null, with a FORBIDDEN error, for a caller without groups:read.',
      resolve: async (user, _args, ctx) => (await groupsOf(ctx).load(user.id)).groups,
    }),
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    name: t.exposeString('name', { nullable: true }),
    status: t.field({ type: UserStatusRef, resolve: (user) => user.status }),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
    lastSignInAt: t.exposeString('last_sign_in_at', { nullable: true }),
    emailVerified: t.exposeBoolean('email_verified'),
    mfaEnabled: t.exposeBoolean('mfa_enabled'),
    metadata: t.field({ type: 'JSON', resolve: (user) => user.metadata }),
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
