export { MemoryWindowLimiter, memoryLimits, type Limits, type WindowLimiter } from './window.js';
export { RedisLimits, openLimits, type RedisLimitsOptions } from './redis.js';

/** The Redis URL: `--redis`, else `$RPCCTL_REDIS_URL`, else config `redis.url`; none keeps limits in memory. */
export function redisUrl(flag: string | undefined, configUrl: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return flag || env.RPCCTL_REDIS_URL || configUrl || undefined;
}
