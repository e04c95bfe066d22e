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

/** Field extensions of a nested field whose resolver calls a procedure (through a loader). */
export const CALLS_PROCEDURE = { callsProcedure: true } as const;

function compositeOrNothing(type: GraphQLNamedType | null | undefined): GraphQLCompositeType | undefined {
  return type && isCompositeType(type) ? type : undefined;
}

/**
 * A validation rule: a document that asks for more than MAX_PROCEDURE_CALLS procedure calls in one
 * operation is refused before anything runs. Fragments are counted where they are spread, each
 * fragment once (memoised), so a chain of fragments spreading each other twice costs linear time to
 * count. Unknown fields and fragment cycles count nothing here; the standard rules refuse them.
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
  const fragmentCalls = new Map<string, number>();
  const counting = new Set<string>();

  function callsOfFragment(name: string): number {
    const known = fragmentCalls.get(name);
    if (known !== undefined) return known;
    const fragment = context.getFragment(name);
    if (!fragment || counting.has(name)) return 0;
    counting.add(name);
    const calls = callsOf(fragment.selectionSet, compositeOrNothing(schema.getType(fragment.typeCondition.name.value)));
    counting.delete(name);
    fragmentCalls.set(name, calls);
    return calls;
  }

  function callsOf(set: SelectionSetNode, type: GraphQLCompositeType | undefined): number {
    let calls = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        calls += callsOfFragment(selection.name.value);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const inner = selection.typeCondition ? compositeOrNothing(schema.getType(selection.typeCondition.name.value)) : type;
        calls += callsOf(selection.selectionSet, inner);
      } else if (type && 'getFields' in type) {
        // Introspection fields (__typename, __schema, __type) are not among getFields(): they call nothing.
        const field = type.getFields()[selection.name.value];
        if (!field) continue;
        if (roots.has(type) || field.extensions.callsProcedure === true) calls += 1;
        if (selection.selectionSet) calls += callsOf(selection.selectionSet, compositeOrNothing(getNamedType(field.type)));
      }
    }
    return calls;
  }

  return {
    OperationDefinition(operation) {
      const calls = callsOf(operation.selectionSet, compositeOrNothing(schema.getRootType(operation.operation)));
      if (calls <= MAX_PROCEDURE_CALLS) return;
      context.reportError(
        new GraphQLError(
          `The document asks for ${calls} procedure calls; at most ${MAX_PROCEDURE_CALLS} are allowed per request ` +
            '(each root field and alias counts, and each batched relation such as roles or memberCount): split it into several requests',
          { nodes: operation, extensions: { code: 'BAD_REQUEST' } },
        ),
      );
    },
  };
}
