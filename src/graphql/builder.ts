import SchemaBuilder from '@pothos/core';
import type { createCaller } from '../router.ts';

/** Resolvers reach the domain only through this caller: same validation, permissions and audit. */
export interface GraphQLContext {
  caller: ReturnType<typeof createCaller>;
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
});

builder.queryType({ description: 'Reads, as the caller is allowed to see them.' });
builder.mutationType({ description: 'Changes, with the same permission checks and audit as REST.' });

export const PageMetaRef = builder.objectRef<{ total: number; page: number; per_page: number }>('PageMeta').implement({
  fields: (t) => ({
    total: t.exposeInt('total'),
    page: t.exposeInt('page'),
    perPage: t.exposeInt('per_page'),
  }),
});
