import { buildOpenApiDocument } from '../src/core/openapi.ts';
import { printGraphQLSchema } from '../src/graphql/schema.ts';

/** The generated contracts, committed under schema/ and checked for drift by CI and a test. */
export const SCHEMA_FILES: Record<string, () => string> = {
  'schema/openapi.json': () => `${JSON.stringify(buildOpenApiDocument('http://localhost:3000'), null, 2)}\n`,
  'schema/schema.graphql': () => printGraphQLSchema(),
};
