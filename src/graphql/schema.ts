import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
import '../modules/auth/auth.graphql.ts';
import '../modules/users/users.graphql.ts';
import '../modules/roles/roles.graphql.ts';
import '../modules/groups/groups.graphql.ts';
import '../modules/audit/audit.graphql.ts';
import '../modules/threat/threat.graphql.ts';
import '../modules/iga/iga.graphql.ts';

/** The admin schema: every module's `*.graphql.ts` registers its types on the builder above. */
export const graphqlSchema: GraphQLSchema = builder.toSchema();

export function printGraphQLSchema(): string {
  return `${printSchema(lexicographicSortSchema(graphqlSchema))}\n`;
}
