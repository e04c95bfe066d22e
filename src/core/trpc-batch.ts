/**
 * The most calls one tRPC batch request may carry. The server refuses a longer batch (400
 * BAD_REQUEST) before any call runs, since each request counts once against the per-IP limit; the
 * dashboard's httpBatchLink sends at most this many per request (`maxItems`) and splits the rest. A
 * dashboard screen asks for about a dozen at once.
 */
export const TRPC_MAX_BATCH_SIZE = 20;
