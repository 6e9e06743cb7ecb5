import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { ApiClient } from '../../src/client/index.js';
import { signatureHeaders } from '../../src/client/signing.js';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/serve/service.js';
import { createAccount, createApiKey, Store } from '../../src/store/index.js';
import { writeFileSync } from 'node:fs';

export interface TestService {
  service: RunningService;
  store: Store;
  baseUrl: string;
  gatewayUrl: string;
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
    gateway: { host: '127.0.0.1', port: 0, ...overrides.gateway },
    limits: { api_rps_per_ip: 100_000, api_rpm_per_account: 100_000, webhook_tests_per_minute: 100_000, ...overrides.limits },
  };
}

export async function startTestService(
  overrides: ConfigInput = {},
  opts: { dataDir?: string; keepDataDir?: boolean; watch?: ServiceOptions['watch']; cabinet?: ServiceOptions['cabinet']; env?: NodeJS.ProcessEnv } = {},
): Promise<TestService> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'rpcctl-test-'));
  const configFile = join(dataDir, 'config.json');
  const config = testConfig(overrides);
  parseConfig(config); // fail here, with the config's own message, rather than in the service
  writeFileSync(configFile, JSON.stringify(config));
  const service = await startService({ configFile, dataDir, env: { ...process.env, RPCCTL_MASTER_KEY: '', ...opts.env }, log: process.env.RPCCTL_TEST_LOG ? (l) => console.error(l) : () => {}, watch: opts.watch, cabinet: opts.cabinet });
  const baseUrl = service.apiUrl;
  const clients: ApiClient[] = [];
  return {
    service, store: service.store, baseUrl, gatewayUrl: service.gatewayUrl, dataDir,
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
      if (!opts.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Mutating signatures sent this second: the server refuses one used twice (replay). */
const sentSignatures = new Map<string, number>();

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
