import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../src/client/api-client.js';
import { AddressWatchClient } from '../src/client/address-watch.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { freePort } from './helpers/private-servers.js';
import { describeUnless } from './helpers/skips.js';

/**
 * compose.yaml for real, with podman-compose: the image built from the Containerfile, two
 * instances on PostgreSQL + Redis behind nginx. A signed API call through nginx, a JSON-RPC call
 * through the gateway to anvil on this machine, a webhook delivered to a receiver here; then
 * `down` and nothing of the project is left (containers, network, volumes).
 *
 * The images build on local bases made without a registry (deploy/containers/base-images.sh:
 * about 6 minutes once per machine); podman's layer cache keeps rebuilds short.
 */
const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const missing = ['podman', 'podman-compose', 'debootstrap'].filter((b) => !has(b));
const skip = missing.length ? `${missing.join(', ')} not installed (Debian: apt-get install podman buildah runc debootstrap podman-compose)` : undefined;

const project = `rpcctl-e2e-${process.pid}`;
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  // Debian's podman on the project's machines needs two settings (runc, cgroupfs): the repo's file.
  CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(root, 'deploy/containers/containers.conf'),
  // HEALTHCHECK is kept in the docker image format only.
  BUILDAH_FORMAT: 'docker',
  RPCCTL_BASE_IMAGE: 'localhost/rpcctl-node24',
  RPCCTL_DEBIAN_IMAGE: 'localhost/rpcctl-bookworm',
  RPCCTL_IMAGE: 'localhost/rpcctl:e2e',
  RPCCTL_MASTER_KEY: randomBytes(32).toString('hex'),
  POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
};
const compose = (...args: string[]) => run('podman-compose', ['-p', project, '-f', join(root, 'compose.yaml'), ...args], { cwd: root, env, maxBuffer: 64 << 20 });
const podman = async (...args: string[]) => (await run('podman', args, { env, maxBuffer: 64 << 20 })).stdout.trim();
const container = (service: string) => `${project}_${service}_1`;
const cli = async (service: string, ...args: string[]) => JSON.parse(await podman('exec', container(service), 'node', '/app/bin/rpcctl.js', ...args, '--json'));

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Everything podman holds of this project: containers, volumes, networks. */
async function leftovers(): Promise<string[]> {
  const label = `label=io.podman.compose.project=${project}`;
  const containers = (await podman('ps', '-a', '--filter', label, '--format', '{{.Names}}')).split('\n');
  const volumes = (await podman('volume', 'ls', '--filter', label, '--format', '{{.Name}}')).split('\n');
  const networks = (await podman('network', 'ls', '--format', '{{.Name}}')).split('\n').filter((n) => n.startsWith(`${project}_`));
  return [...containers, ...volumes, ...networks].filter(Boolean);
}

async function down(): Promise<void> {
  await compose('down', '-v', '-t', '20').catch(() => {});
  // podman-compose 1.0.3 leaves the project network behind.
  await podman('network', 'rm', '-f', `${project}_default`).catch(() => {});
}

describeUnless(skip, 'compose.yaml: two instances on PostgreSQL + Redis behind nginx', () => {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'rpcctl-compose-'));
  let anvil: Anvil;
  let rx: Receiver;
  let apiPort: number;
  let gatewayPort: number;
  let hostAddress: string;
  const timings: Record<string, number> = {};
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      timings[name] = Math.round((Date.now() - t0) / 100) / 10;
    }
  };

  beforeAll(async () => {
    // With the machine's environment: npm reaches the registry through its TLS and proxy settings.
    await step('base images', () => run('bash', [join(root, 'deploy/containers/base-images.sh')], { env: { ...process.env, ...env }, maxBuffer: 64 << 20 }));
    await step('build', () => compose('build'));
    [apiPort, gatewayPort] = [await freePort(), await freePort()];
    Object.assign(env, { RPCCTL_API_PORT: `127.0.0.1:${apiPort}`, RPCCTL_GATEWAY_PORT: `127.0.0.1:${gatewayPort}` });
    // The stores first: then the project network exists, and anvil and the webhook receiver
    // listen on its gateway address, where the containers reach this machine (nothing on
    // the machine's other interfaces).
    await step('up stores', () => compose('up', '-d', 'postgres', 'redis'));
    hostAddress = JSON.parse(await podman('network', 'inspect', `${project}_default`))[0].subnets[0].gateway;
    [anvil, rx] = await Promise.all([startAnvil({ host: hostAddress }), startReceiver(0, hostAddress)]);
    const config = join(dir, 'rpcctl.yaml');
    writeFileSync(config, JSON.stringify({
      api: { host: '0.0.0.0', port: 8080 },
      gateway: { host: '0.0.0.0', port: 8545, workers: 1 },
      metrics: { listen: '0.0.0.0:9464' },
      networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }] }],
      // The receiver is on a private address.
      webhooks: { allow_private_urls: true },
    }));
    chmodSync(config, 0o644);
    env.RPCCTL_CONFIG = config;
    await step('up', () => compose('up', '-d'));
    // Both instances ready (their own health check), then nginx answering for them.
    await step('ready', async () => {
      for (const service of ['rpcctl-1', 'rpcctl-2']) {
        await until(`${service} healthy`, async () => ((await podman('healthcheck', 'run', container(service)).then(() => true, () => false)) ? true : undefined), 240_000);
      }
      await until('nginx', async () => ((await request(`http://127.0.0.1:${apiPort}/ready`)).statusCode === 200 ? true : undefined));
    });
  }, 30 * 60_000);

  afterAll(async () => {
    await down();
    await Promise.all([anvil?.stop(), rx?.close()]);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('a signed API call, a JSON-RPC call through the gateway to anvil and a webhook, through nginx to either instance', async () => {
    // An operator's first steps, with the CLI inside an instance (it reads the same store).
    const account = await cli('rpcctl-1', 'admin', 'accounts', 'create', '--plan', 'pro');
    const key = await cli('rpcctl-2', 'admin', 'keys', 'create', '--account', String(account.user_id));
    const { secret: webhookSecret } = await cli('rpcctl-1', 'admin', 'webhook-secret', '--account', String(account.user_id));
    expect(webhookSecret).toMatch(/\S{16,}/);

    const api = new ApiClient({ baseUrl: `http://127.0.0.1:${apiPort}`, apiKey: key.api_key, secret: key.secret, maxRetries: 0 });
    try {
      const { endpoint } = await api.request<{ endpoint: { uuid: string } }>('POST', '/v1/endpoints', { body: { name: 'compose', network_slug: 'anvil', env_slug: 'local' } });
      const watch = new AddressWatchClient(api);
      await watch.setWebhook({ url: rx.url, enabled: true, events: { block: false } });
      const [owner, to] = anvil.accounts as [Address, Address];
      expect((await watch.add('anvil', to)).created).toBe(true);

      const rpc = async (method: string, params: unknown[] = []) => {
        const res = await request(`http://127.0.0.1:${gatewayPort}/${endpoint.uuid}`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        expect(res.statusCode).toBe(200);
        return (await res.body.json() as { result: unknown }).result;
      };
      // Several calls: nginx spreads them over both instances (checked on their metrics below).
      for (let i = 0; i < 6; i++) expect(await rpc('eth_chainId')).toBe('0x7a69');
      const hash = await rpc('eth_sendTransaction', [{ from: owner, to, value: '0x2a' }]) as `0x${string}`;
      await until('the receipt', async () => (await rpc('eth_getTransactionReceipt', [hash])) ?? undefined, 60_000);

      // The scanner (on one instance or the other) saw it; the outbox delivered it, signed.
      await rx.waitFor((all) => all.some((r) => r.body.includes(hash)), 120_000);
      const delivery = rx.received.find((r) => r.body.includes(hash))!;
      expect(signatureValid(webhookSecret, delivery)).toBe(true);
      expect(JSON.parse(delivery.body)).toMatchObject({ type: 'payment', network: 'anvil', tx_hash: hash });
    } finally {
      await api.close();
    }

    // Both instances served gateway calls; each one's metrics listener answers the other across
    // the compose network, and no port of theirs is published on the machine.
    for (const [service, other] of [['rpcctl-1', 'rpcctl-2'], ['rpcctl-2', 'rpcctl-1']] as const) {
      const text = await podman('exec', container(other), 'node', '-e', `fetch('http://${service}:9464/metrics').then((r) => r.text()).then((t) => process.stdout.write(t))`);
      const served = text.split('\n').filter((l) => l.startsWith('rpcctl_gateway_requests_total{') && l.includes('network="anvil"'))
        .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
      expect(served, service).toBeGreaterThan(0);
      expect(await podman('port', container(service))).toBe('');
    }
    expect((await podman('port', container('nginx'))).split('\n').sort()).toEqual([`8080/tcp -> 127.0.0.1:${apiPort}`, `8545/tcp -> 127.0.0.1:${gatewayPort}`]);
  }, 5 * 60_000);

  it('down leaves nothing of the project behind: containers, network, volumes', async () => {
    expect((await leftovers()).length).toBeGreaterThan(5);
    await step('down', () => down());
    expect(await leftovers()).toEqual([]);
    console.log(`compose test timings (s): ${JSON.stringify(timings)}; total ${Math.round((Date.now() - started) / 1000)} s`);
  }, 120_000);
});
