import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { ApiClient } from '../../src/client/index.js';
import { signatureHeaders } from '../../src/client/signing.js';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/serve/service.js';
import { createAccount, createApiKey, insertMember, Store, type Role } from '../../src/store/index.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { freshRedisPrefix, freshSchema, reuseSchema, testDatabaseUrl, testRedisUrl } from './shared-stores.js';

export interface TestService {
  service: RunningService;
  store: Store;
  baseUrl: string;
  gatewayUrl: string;
  /** The metrics listener's base URL (GET /metrics); undefined when it is off. */
  metricsUrl: string | undefined;
  dataDir: string;
  /** Creates an account on `plan` with one key; returns a signed client for it. */
  merchant(opts?: { plan?: string; allowedIps?: string[] }): Promise<Merchant>;
  stop(): Promise<void>;
}

export interface Merchant {
  userId: number;
  apiKey: string;
  secret: string;
  client: ApiClient;
  /** A signed request that returns status, headers and body whatever the status. */
  call(method: string, path: string, body?: string, headers?: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: any }>;
}

/** Test config: loopback on ephemeral ports, limits high enough not to interfere. */
export function testConfig(overrides: ConfigInput = {}): ConfigInput {
  return {
    ...overrides,
    api: { host: '127.0.0.1', port: 0, ...overrides.api },
    // More than one gateway worker everywhere, so every behaviour test runs across workers.
    gateway: { host: '127.0.0.1', port: 0, workers: Number(process.env.RPCCTL_TEST_GATEWAY_WORKERS ?? 2), ...overrides.gateway },
    limits: { api_rps_per_ip: 100_000, api_rpm_per_account: 100_000, webhook_tests_per_minute: 100_000, ...overrides.limits },
    // Tests run side by side: the metrics listener takes any free port, never the default's.
    metrics: { listen: '127.0.0.1:0', ...overrides.metrics },
    // A SIGTERM stops at once: tests that drain say so.
    shutdown: { drain_s: 0, ...overrides.shutdown },
  };
}

export async function startTestService(
  overrides: ConfigInput = {},
  opts: {
    dataDir?: string; keepDataDir?: boolean; watch?: ServiceOptions['watch']; cabinet?: ServiceOptions['cabinet']; env?: NodeJS.ProcessEnv; logger?: ServiceOptions['logger'];
    /** The service's log lines (default: none, or stderr with RPCCTL_TEST_LOG). */
    log?: (line: string) => void;
  } = {},
): Promise<TestService> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'rpcctl-test-'));
  const configFile = join(dataDir, 'config.json');
  const config = testConfig(overrides);
  // With RPCCTL_TEST_DATABASE_URL / RPCCTL_TEST_REDIS_URL the same tests run on PostgreSQL +
  // Redis: a schema and a key prefix of this service's own.
  // A test that restarts a service on its data dir gets the same schema back.
  const schemaFile = join(dataDir, 'test-database.json');
  const schema = !testDatabaseUrl ? undefined
    : existsSync(schemaFile) ? reuseSchema(JSON.parse(readFileSync(schemaFile, 'utf8')) as { url: string; schema: string })
    : await freshSchema();
  if (schema) writeFileSync(schemaFile, JSON.stringify({ url: schema.url, schema: schema.schema }));
  if (testRedisUrl) config.redis = { url: testRedisUrl, key_prefix: freshRedisPrefix(), ...config.redis };
  parseConfig(config); // fail here, with the config's own message, rather than in the service
  writeFileSync(configFile, JSON.stringify(config));
  let service: RunningService;
  try {
    service = await startService({
      configFile, dataDir, databaseUrl: schema?.url, env: { ...process.env, RPCCTL_MASTER_KEY: '', RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '', ...opts.env },
      log: opts.log ?? (process.env.RPCCTL_TEST_LOG ? (l) => console.error(l) : () => {}), watch: opts.watch, cabinet: opts.cabinet, logger: opts.logger,
    });
  } catch (err) {
    await schema?.drop();
    throw err;
  }
  const baseUrl = service.apiUrl;
  const clients: ApiClient[] = [];
  return {
    service, store: service.store, baseUrl, gatewayUrl: service.gatewayUrl, metricsUrl: service.metricsUrl, dataDir,
    async merchant(opts = {}) {
      const plan = service.store.catalog.planBySlug(opts.plan ?? 'pro');
      if (!plan) throw new Error(`no plan ${opts.plan}`);
      const account = await createAccount(service.store, { planId: plan.id });
      const key = await createApiKey(service.store, { accountId: account.id, allowedIps: opts.allowedIps ?? [] });
      const client = new ApiClient({ baseUrl, apiKey: key.api_key, secret: key.secret, maxRetries: 0 });
      clients.push(client);
      return {
        userId: account.id, apiKey: key.api_key, secret: key.secret, client,
        call: (method, path, body = '', headers = {}) => signedCall(baseUrl, key.api_key, key.secret, method, path, body, headers),
      };
    },
    async stop() {
      await Promise.all(clients.map((c) => c.close()));
      await service.stop();
      if (!opts.keepDataDir) {
        await schema?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** The store URL a test service on `dataDir` used (its PostgreSQL schema), for opening it again directly. */
export function storeUrlOf(dataDir: string): string | undefined {
  const file = join(dataDir, 'test-database.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { url: string }).url : undefined;
}

/** Drops the PostgreSQL schema a kept data dir's service used (nothing on SQLite). */
export async function dropTestSchema(dataDir: string): Promise<void> {
  const file = join(dataDir, 'test-database.json');
  if (existsSync(file)) await reuseSchema(JSON.parse(readFileSync(file, 'utf8')) as { url: string; schema: string }).drop();
}

/** Mutating signatures sent this second: the server refuses one used twice (replay). */
const sentSignatures = new Map<string, number>();

/**
 * A joined member of `m`'s account with `role`, and an API key that member made (a key acts
 * with its maker's role): the key, and a signed call with it.
 */
export async function memberKey(t: TestService, m: Merchant, role: Role, email: string): Promise<{ apiKey: string; secret: string; call: Merchant['call'] }> {
  const member = await insertMember(t.store, { accountId: m.userId, email, passwordHash: null, role, joined: true, now: new Date().toISOString() });
  const key = await createApiKey(t.store, { accountId: m.userId, createdByMember: member });
  return { apiKey: key.api_key, secret: key.secret, call: (method, path, body = '', headers = {}) => signedCall(t.baseUrl, key.api_key, key.secret, method, path, body, headers) };
}

export async function signedCall(
  baseUrl: string, apiKey: string, secret: string, method: string, path: string, body = '', headers: Record<string, string> = {},
) {
  let signed = signatureHeaders({ apiKey, secret, method, path, body });
  if (method !== 'GET' && method !== 'HEAD' && !('x-signature' in headers)) {
    const second = Math.floor(Date.now() / 1000);
    for (const [sig, s] of sentSignatures) if (s < second) sentSignatures.delete(sig);
    if (sentSignatures.has(signed['x-signature']!)) {
      // The same request twice in one second: send the second with the next second's signature.
      await new Promise((r) => setTimeout(r, 1005 - (Date.now() % 1000)));
      signed = signatureHeaders({ apiKey, secret, method, path, body });
    }
    sentSignatures.set(signed['x-signature']!, Math.floor(Date.now() / 1000));
  }
  return rawCall(baseUrl, method, path, body, { ...signed, ...(body ? { 'content-type': 'application/json' } : {}), ...headers });
}

export async function rawCall(baseUrl: string, method: string, path: string, body = '', headers: Record<string, string> = {}) {
  const res = await request(baseUrl + path, { method: method as 'GET', headers, body: body === '' ? undefined : body });
  const text = await res.body.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON: keep the text */ }
  return { status: res.statusCode, headers: res.headers as Record<string, unknown>, body: parsed as any };
}
