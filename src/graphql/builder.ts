import SchemaBuilder from '@pothos/core';
import type { createCaller } from '../router.ts';

/** Resolvers reach the domain only through this caller: same validation, permissions and audit. */
export interface GraphQLContext {
  caller: ReturnType<typeof createCaller>;
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: { JSON: { Input: unknown; Output: unknown } };
}>({
  defaultFieldNullability: false,
});

builder.queryType({ description: 'Reads, as the caller is allowed to see them.' });
builder.mutationType({ description: 'Changes, with the same permission checks and audit as REST.' });

/** Free-form JSON (an audit event's `details`), passed through as it is. */
builder.scalarType('JSON', {
  description: 'Any JSON value',
  serialize: (value) => value,
  parseValue: (value) => value,
});

export const PageMetaRef = builder.objectRef<{ total: number; page: number; per_page: number }>('PageMeta').implement({
  fields: (t) => ({
    total: t.exposeInt('total'),
    page: t.exposeInt('page'),
    perPage: t.exposeInt('per_page'),
  }),
});
