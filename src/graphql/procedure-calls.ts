import {
  GraphQLError,
  getNamedType,
  isCompositeType,
  Kind,
  type ASTVisitor,
  type GraphQLCompositeType,
  type GraphQLNamedType,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

/**
 * The most procedure calls one document may ask for. Every root field (each alias too) calls one
 * procedure, and so does every field marked {@link CALLS_PROCEDURE} wherever it appears: those load
 * through a per-request DataLoader, one batch call for the whole list they sit in, not one per parent.
 * Every query of the schema asked at once, each with every batched relation, is 17 calls; the reports
 * in the README ask for 6.
 */
export const MAX_PROCEDURE_CALLS = 20;

/**
 * The most aliases one document may use, root fields that call a procedure aside (those are bounded
 * by MAX_PROCEDURE_CALLS). An alias below the root copies its field into every row of the page it sits
 * in: 200 aliases of a user's `metadata` (up to 16 KiB each) over pages of 100 users made one request
 * of 60 KiB answer hundreds of megabytes.
 */
export const MAX_ALIASES = 20;

/** Field extensions of a nested field whose resolver calls a procedure (through a loader). */
export const CALLS_PROCEDURE = { callsProcedure: true } as const;

/** What part of a document asks for: procedure calls, and aliases that are not a root call's. */
interface Cost {
  calls: number;
  aliases: number;
}

function compositeOrNothing(type: GraphQLNamedType | null | undefined): GraphQLCompositeType | undefined {
  return type && isCompositeType(type) ? type : undefined;
}

function add(sum: Cost, more: Cost): void {
  sum.calls += more.calls;
  sum.aliases += more.aliases;
}

/**
 * A validation rule: a document that asks for more than MAX_PROCEDURE_CALLS procedure calls, or uses
 * more than MAX_ALIASES aliases, in one operation is refused before anything runs. Fragments are
 * counted where they are spread, each fragment once (memoised), so a chain of fragments spreading each
 * other twice costs linear time to count. Unknown fields and fragment cycles count nothing here; the
 * standard rules refuse them.
 */
export function ProcedureCallLimitRule(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  const roots = new Set<GraphQLNamedType | null | undefined>([
    schema.getQueryType(),
    schema.getMutationType(),
    schema.getSubscriptionType(),
  ]);
  roots.delete(null);
  roots.delete(undefined);
  const fragmentCosts = new Map<string, Cost>();
  const counting = new Set<string>();

  function costOfFragment(name: string): Cost {
    const known = fragmentCosts.get(name);
    if (known !== undefined) return known;
    const fragment = context.getFragment(name);
    if (!fragment || counting.has(name)) return { calls: 0, aliases: 0 };
    counting.add(name);
    const cost = costOf(fragment.selectionSet, compositeOrNothing(schema.getType(fragment.typeCondition.name.value)));
    counting.delete(name);
    fragmentCosts.set(name, cost);
    return cost;
  }

  function costOf(set: SelectionSetNode, type: GraphQLCompositeType | undefined): Cost {
    const cost: Cost = { calls: 0, aliases: 0 };
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        add(cost, costOfFragment(selection.name.value));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const inner = selection.typeCondition ? compositeOrNothing(schema.getType(selection.typeCondition.name.value)) : type;
        add(cost, costOf(selection.selectionSet, inner));
      } else if (type && 'getFields' in type) {
        const aliased = selection.alias !== undefined && selection.alias.value !== selection.name.value;
        // Introspection fields (__typename, __schema, __type) are not among getFields(): they call nothing.
        const field = type.getFields()[selection.name.value];
        const calls = field !== undefined && (roots.has(type) || field.extensions.callsProcedure === true);
        if (calls) cost.calls += 1;
        if (aliased && !(calls && roots.has(type))) cost.aliases += 1;
        if (field && selection.selectionSet) add(cost, costOf(selection.selectionSet, compositeOrNothing(getNamedType(field.type))));
      }
    }
    return cost;
  }

  return {
    OperationDefinition(operation) {
      const { calls, aliases } = costOf(operation.selectionSet, compositeOrNothing(schema.getRootType(operation.operation)));
      if (calls > MAX_PROCEDURE_CALLS) {
        context.reportError(
          new GraphQLError(
            `The document asks for ${calls} procedure calls; at most ${MAX_PROCEDURE_CALLS} are allowed per request ` +
              '(each root field and alias counts, and each batched relation such as roles or memberCount): split it into several requests',
            { nodes: operation, extensions: { code: 'BAD_REQUEST' } },
          ),
        );
      }
      if (aliases > MAX_ALIASES) {
        context.reportError(
          new GraphQLError(
            `The document uses ${aliases} aliases; at most ${MAX_ALIASES} are allowed per request besides those of root fields ` +
              '(an alias counts each time its fragment is spread)',
            { nodes: operation, extensions: { code: 'BAD_REQUEST' } },
          ),
        );
      }
    },
  };
}
