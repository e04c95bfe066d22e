import { Redis } from 'ioredis';
import type { Logger } from './logger.ts';

/** Redis holds only what may be lost (rate-limit counters, caches); PostgreSQL decides the rest. */
export async function connectRedis(url: string, log: Logger): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  redis.on('error', (error: Error) => log.warn('redis error', { error: error.message }));
  await redis.connect();
  return redis;
}
