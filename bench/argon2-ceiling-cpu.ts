import argon2 from 'argon2';
import { hashPassword } from '../src/core/passwords.ts';
import { delta, threadsOf } from './cpu-threads.ts';
import { BENCH_PASSWORD } from './seed.ts';

/**
 * The Argon2id ceiling's CPU per verify: bench/argon2-ceiling.ts's loop (32 verifies in flight, the
 * service's parameters, started with UV_THREADPOOL_SIZE = cores), stopped after VERIFIES verifies
 * instead of a duration, then each thread's CPU time read off /proc. Prints one JSON line.
 */
const VERIFIES = Number(process.env.VERIFIES ?? 400);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

const hash = await hashPassword(BENCH_PASSWORD);
let started = 0;
const before = threadsOf(process.pid);
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    while (started < VERIFIES) {
      started += 1;
      await argon2.verify(hash, BENCH_PASSWORD);
    }
  }),
);
const wallMs = performance.now() - t0;
const threads = delta(before, threadsOf(process.pid)).filter((t) => t.cpuNs > 0);
process.stdout.write(`${JSON.stringify({ verifies: started, wallMs, threads })}\n`);
