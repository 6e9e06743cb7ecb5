export { MemoryWindowLimiter, memoryLimits, type Limits, type WindowLimiter } from './window.js';
export { LiveInstances, HEARTBEAT_MS, shareOf } from './instances.js';
export { RedisOutage } from './outage.js';
export { RedisLimits, openLimits, connectRedis, boundedCall, pingUntilBack, type RedisClient, type RedisLimitsOptions } from './redis.js';

/** The Redis URL: `--redis`, else `$RPCCTL_REDIS_URL`, else config `redis.url`; none keeps limits in memory. */
export function redisUrl(flag: string | undefined, configUrl: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = flag || env.RPCCTL_REDIS_URL || configUrl || undefined;
  // Checked before anything opens: config's redis.url is checked by its schema, the flag and
  // the variable here, so a typo is one clear line rather than a half-started service.
  if (url !== undefined && !/^rediss?:\/\//.test(url)) throw new Error(`the Redis URL must start with redis:// or rediss:// (check ${flag ? '--redis' : env.RPCCTL_REDIS_URL ? '$RPCCTL_REDIS_URL' : 'config redis.url'})`);
  return url;
}
