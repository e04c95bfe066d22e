import { z } from 'zod';

const DIGITS = /^[0-9]+$/;

/**
 * A number in a query string, where every value is text: only plain decimal digits are read as one
 * (`7`, `007`). `Number()` also reads `1e0`, `0x1`, ` 1`, `+5` and the empty string, and those stay
 * text here, so `schema` refuses them (400). tRPC and GraphQL send JSON numbers, taken as they are.
 */
export function queryNumber<T extends z.ZodNumber>(schema: T) {
  return z.preprocess((value) => (typeof value === 'string' && DIGITS.test(value) ? Number(value) : value), schema);
}

/**
 * `page` starts at 1; `per_page` defaults to 20, at most 100. Anything else is BAD_REQUEST. The
 * defaults are prefaults (fed in as input when the value is missing) so that the OpenAPI document
 * still shows them: zod leaves a default out of the input schema of a value that is transformed.
 */
export const pageParams = {
  page: queryNumber(z.number().int().min(1)).prefault(1),
  per_page: queryNumber(z.number().int().min(1).max(100)).prefault(20),
};

export interface PageQuery {
  page: number;
  per_page: number;
}

export const pageMeta = z.object({ total: z.number().int(), page: z.number().int(), per_page: z.number().int() });

/**
 * A list answer: `{data: [...], meta: {total, page, per_page}}`. The REST envelope passes it through
 * as it is (see core/envelope.ts), so lists read the same on every door.
 */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: pageMeta });
}

export function toPage<T>(data: T[], total: number, query: PageQuery) {
  return { data, meta: { total, page: query.page, per_page: query.per_page } };
}

export function offsetOf(query: PageQuery): { limit: number; offset: number } {
  return { limit: query.per_page, offset: (query.page - 1) * query.per_page };
}

/** Escapes LIKE wildcards so a search for `50%` matches the text, not everything. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export const deletedOutput = z.object({ id: z.string(), deleted: z.literal(true) });
