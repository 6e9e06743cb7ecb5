import { execFileSync, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, cliStarted, tempConfigDir } from './helpers/cli.js';
import { parseConfig } from '../src/config/index.js';
import { insertEndpointChecked, Store } from '../src/store/index.js';
import { itUnless } from './helpers/skips.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const rpcctl = (args: string[], env: Record<string, string> = {}) =>
  execa(process.execPath, [bin, ...args], { reject: false, input: '', env: { NO_COLOR: '1', ...env }, extendEnv: true });

const holders: Server[] = [];
afterAll(() => { for (const s of holders) s.close(); });

async function holdPort(): Promise<number> {
  const server = createServer();
  holders.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/**
 * Start-up may log what it loaded (one JSON line each, stderr not being a terminal) before a
 * listener fails; the failure itself is one plain line at the end, with no stack trace.
 */
function expectEndsWithOneLine(stderr: string, line: string): void {
  const lines = stderr.split('\n').filter((l) => l !== '');
  expect(lines.at(-1)).toBe(line);
  expect(stderr).not.toMatch(/^\s+at /m);
  for (const earlier of lines.slice(0, -1)) expect(JSON.parse(earlier)).toMatchObject({ level: 'info' });
}

describe('rpcctl serve flags', () => {
  it('a taken port ends with one line naming the port and the flag, exit 1, no stack trace', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-port-'));
    const taken = await holdPort();
    const api = await rpcctl(['serve', '--data-dir', dataDir, '--port', String(taken), '--gateway-port', '0']);
    expect(api.exitCode).toBe(1);
    expectEndsWithOneLine(api.stderr, `error: port ${taken} (Public API) on 127.0.0.1 is already in use: stop what holds it, or choose another with --port N`);
    const gw = await rpcctl(['serve', '--data-dir', dataDir, '--port', '0', '--gateway-port', String(taken)]);
    expect(gw.exitCode).toBe(1);
    expectEndsWithOneLine(gw.stderr, `error: port ${taken} (gateway) on 127.0.0.1 is already in use: stop what holds it, or choose another with --gateway-port N`);
    expect((await rpcctl(['serve', '--data-dir', dataDir, '--port', 'http'])).exitCode).toBe(2);
  });

  it('--upstream: NETWORK-ENV=URL with an http(s) URL, for a network environment the config has', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-upstream-'));
    for (const bad of ['eth-mainnet', 'eth-mainnet=ftp://127.0.0.1/', '=http://127.0.0.1:8546']) {
      const r = await rpcctl(['serve', '--data-dir', dataDir, '--port', '0', '--gateway-port', '0', '--upstream', bad]);
      expect(r.exitCode, bad).toBe(2);
      expectEndsWithOneLine(r.stderr, `error: --upstream must be NETWORK-ENV=URL with an http(s) URL, e.g. eth-mainnet=http://127.0.0.1:8546; got "${bad}"`);
    }
    const unknown = await rpcctl(['serve', '--data-dir', dataDir, '--port', '0', '--gateway-port', '0', '--upstream', 'eth-moon=http://127.0.0.1:8546']);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toMatch(/error: --upstream eth-moon=\.\.\.: no network environment "eth-moon" \(one of: eth-mainnet, eth-sepolia/);
  });

  it('--gateway-port: the printed endpoint URL form follows the real gateway port; no accounts: init --local is offered', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-gwport-'));
    const gatewayPort = await holdPort();
    holders.pop()!.close(); // free again: serve takes it
    const child = execa(process.execPath, [bin, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--gateway-port', String(gatewayPort)], { reject: false, env: { NO_COLOR: '1' } });
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
    const deadline = Date.now() + 20_000;
    while (!stdout.includes('init --local') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stdout).toMatch(new RegExp(`gateway\\s+http://127\\.0\\.0\\.1:${gatewayPort}\\n`));
    expect(stdout).toContain(`endpoint URLs look like http://rpc-{network}-{env}.localhost:${gatewayPort}/{endpoint_uuid}`);
    expect(stdout).toMatch(new RegExp(`rpcctl init --local --data-dir ${dataDir} --base-url http://127\\.0\\.0\\.1:\\d+\\n`));
  });
});

describe('Node version', () => {
  // The system Node of this machine is older than 22.22 (the repo pins 24 for its scripts).
  const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => existsSync(p));
  const version = systemNode ? execFileSync(systemNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim() : undefined;
  const [major, minor] = (version ?? '99.0').split('.').map(Number) as [number, number];
  const old = major < 22 || (major === 22 && minor < 22);
  const noOld = !old && `no Node older than 22.22 on this machine (system node: ${version ?? 'none'})`;

  itUnless(noOld, 'an old Node gets one line saying which Node is needed, not a node:sqlite error', () => {
    const lonely = join(mkdtempSync(join(tmpdir(), 'rpcctl-oldnode-')), 'rpcctl.js');
    copyFileSync(bin, lonely); // no pinned Node beside it, as in a global install
    let stderr = '';
    let status = 0;
    try {
      execFileSync(systemNode!, [lonely, '--version'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      ({ stderr, status } = err as { stderr: string; status: number });
    }
    expect(status).toBe(1);
    expect(stderr).toContain(`rpcctl needs Node.js >= 22.22 (this is v${version})`);
    expect(stderr).not.toContain('sqlite');
  });

  // The README says an old Node is handled in a clone; npm warns of no package but the ones the
  // README names, whose own engines ask for Node 22 (the repo's scripts run on the pinned Node 24).
  /** The packages README.md names as wanting Node 22: OpenTelemetry's SDK (traces) and the Kubernetes schemas the deploy tests validate against. */
  const NODE_22_PACKAGES = /^(@opentelemetry\/|kubernetes-models$|@kubernetes-models\/)/;
  const npmCli = systemNode ? join(dirname(realpathSync(systemNode)), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js') : '';
  itUnless(noOld || (!existsSync(npmCli) && 'the system Node has no npm'), 'npm on the old Node installs the clone without an engine warning', () => {
    const r = spawnSync(systemNode!, [npmCli, 'install', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8', env: { ...process.env, PATH: dirname(systemNode!) },
    });
    expect(r.status, r.stderr).toBe(0);
    const out = `${r.stdout}${r.stderr}`;
    const warned = [...out.matchAll(/EBADENGINE\s+package: '(@?[^@']+)@/g)].map((m) => m[1]!);
    expect(warned.filter((p) => !NODE_22_PACKAGES.test(p))).toEqual([]);
    expect(out.match(/Unsupported engine/g)?.length ?? 0).toBe(warned.length);
  });

  itUnless(noOld, 'linked from a clone (npm link), an old Node hands over to the pinned one', () => {
    expect(execFileSync(systemNode!, [bin, '--version'], { encoding: 'utf8' }).trim()).toBe('0.1.0');
  });
});

describe('init --local', () => {
  it('creates an account on the roomiest plan, a key, and a profile holding the webhook secret; a second run keeps it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-local-'));
    const env = { RPCCTL_CONFIG_DIR: tempConfigDir(), RPCCTL_DATA_DIR: dataDir };
    const first = await cli(['init', '--local', '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ name: 'local', base_url: 'http://127.0.0.1:8080', selected: true, user_id: 1 });
    expect(first.stderr).toContain('Created account 1 on the Pro plan');
    const saved = JSON.parse(readFileSync(join(env.RPCCTL_CONFIG_DIR, 'config.json'), 'utf8')).profiles.local;
    const admin = await cli(['admin', 'webhook-secret', '--account', '1', '--json'], { env });
    expect(saved.webhook_secret).toBe(JSON.parse(admin.stdout).secret);
    expect(first.stdout).not.toContain(saved.secret);
    expect(first.stdout).not.toContain(saved.webhook_secret);

    // The README's next step done: the hint on a second run must not offer it again (refused as a duplicate).
    const store = await Store.open({ dataDir, config: parseConfig({}), syncCatalog: 'always', env: {} });
    await insertEndpointChecked(store, { accountId: 1, name: 'main', environmentId: 1 }, () => {});
    await store.close();
    const again = await cli(['init', '--local'], { env });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('Profile "local" already signs in as account 1 here; kept it.');
    expect(again.stderr).toContain('Next (with `rpcctl serve --dev` running): rpcctl endpoints list   ·   rpcctl rpc main eth_blockNumber');
    expect(again.stderr).not.toContain('endpoints create');
    expect(JSON.parse((await cli(['admin', 'accounts', 'list', '--json'], { env })).stdout)).toHaveLength(1);

    expect((await cli(['init', '--local', '--plan', 'gold'], { env: { ...env, RPCCTL_CONFIG_DIR: tempConfigDir() } })).code).toBe(2);
    expect((await cli(['init', '--plan', 'pro'], { env })).stderr).toContain('--plan goes with --local');
  });

  it('webhook listen verifies with the profile\'s secret; a wrong one gets told where the right one comes from', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-local-listen-'));
    const env = { RPCCTL_CONFIG_DIR: tempConfigDir(), RPCCTL_DATA_DIR: dataDir };
    expect((await cli(['init', '--local'], { env })).code).toBe(0);
    const secret = JSON.parse(readFileSync(join(env.RPCCTL_CONFIG_DIR, 'config.json'), 'utf8')).profiles.local.webhook_secret as string;
    const post = async (url: string, key: string) => {
      const ts = String(Math.floor(Date.now() / 1000));
      const body = JSON.stringify({ id: '1', type: 'block', network: 'eth', block_height: 5, block_hash: '0xab', tx_count: 0, created_at: new Date().toISOString() });
      const res = await request(url, { method: 'POST', body, headers: { 'x-timestamp': ts, 'x-signature': createHmac('sha256', key).update(`${ts}.${body}`).digest('hex') } });
      await res.body.dump();
      return res.statusCode;
    };

    const right = cliStarted(['webhook', 'listen'], { env });
    const url = (await right.waitFor(/Listening on (\S+) \(secret whsec_\S+, from profile "local"\)/, 'stderr'))[1]!;
    expect(await post(url, secret)).toBe(200);
    expect((await right.interrupt()).stdout).toMatch(/^1\t/);

    const wrong = cliStarted(['webhook', 'listen'], { env: { ...env, RPCCTL_WEBHOOK_SECRET: 'whsec_stale' } });
    const url2 = (await wrong.waitFor(/Listening on (\S+) \(secret \S+, from \$RPCCTL_WEBHOOK_SECRET\)/, 'stderr'))[1]!;
    expect(await post(url2, secret)).toBe(401);
    expect(await post(url2, secret)).toBe(401);
    const r = await wrong.interrupt();
    expect(r.stderr).toContain('rpcctl admin webhook-secret --account USER_ID');
    expect(r.stderr.match(/admin webhook-secret/g)).toHaveLength(1); // explained once, not per delivery
  });
});
