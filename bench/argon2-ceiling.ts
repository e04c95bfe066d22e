import argon2 from 'argon2';
import { hashPassword } from '../src/core/passwords.ts';
import { BENCH_PASSWORD } from './seed.ts';

/**
 * The sign-in ceiling: Argon2id verifies per second with the service's parameters, `CONNECTIONS` at
 * once, nothing else running. bench/run.ts starts it in its own process with libuv's pool at one
 * thread per core (UV_THREADPOOL_SIZE), its fastest: the default four threads on two cores
 * time-slice and measured about 5% slower here, which made the ceiling, not the service, look worse.
 * Prints one JSON line: `{ rate, p50, p99 }`.
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

const hash = await hashPassword(BENCH_PASSWORD);
const latencies: number[] = [];
const end = Date.now() + DURATION * 1000;
await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    while (Date.now() < end) {
      const t = performance.now();
      await argon2.verify(hash, BENCH_PASSWORD);
      latencies.push(performance.now() - t);
    }
  }),
);
latencies.sort((a, b) => a - b);
const at = (q: number) => Math.round(latencies[Math.floor(latencies.length * q)] ?? 0);
process.stdout.write(`${JSON.stringify({ rate: latencies.length / DURATION, p50: at(0.5), p99: at(0.99) })}\n`);
