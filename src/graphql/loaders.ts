import DataLoader from 'dataloader';
import type { GraphQLContext } from './builder.ts';

/**
 * A per-request DataLoader. A field that would otherwise call the router once per parent object
 * (a role's member count for each of 20 roles) collects the keys of one tick and makes one batch call:
 * the number of statements does not grow with the page. Loaders live as long as the request's context,
 * so nothing is cached across requests or callers.
 */
export function defineLoader<K, V>(
  batch: (ctx: GraphQLContext, keys: readonly K[]) => Promise<V[]>,
  keyOf: (value: V) => K,
  maxBatchSize = 100,
): (ctx: GraphQLContext) => DataLoader<K, V> {
  const perRequest = new WeakMap<GraphQLContext, DataLoader<K, V>>();
  return (ctx) => {
    let loader = perRequest.get(ctx);
    if (!loader) {
      loader = new DataLoader<K, V>(
        async (keys) => {
          const byKey = new Map((await batch(ctx, keys)).map((value) => [keyOf(value), value]));
          return keys.map((key) => byKey.get(key) ?? new Error(`Nothing loaded for ${String(key)}`));
        },
        { maxBatchSize },
      );
      perRequest.set(ctx, loader);
    }
    return loader;
  };
}
