import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultNetworks } from '../src/config/defaults.js';
import type { Address, Hex } from 'viem';
import { startAnvil, type Anvil } from './helpers/anvil.js';

// Every shell line of the README, in order, as a newcomer pastes it after `npm link`: run by
// bash, with this checkout's `rpcctl` first on PATH (test/global-setup.ts). Only what cannot be
// verbatim on a shared machine differs: HOME, data and config dirs are fresh temp dirs, the
// service's ports come from a config file in the data dir (the commands find it there), 4242
// becomes a free port, and Ethereum mainnet is anvil on loopback through the README's own
// `--upstream` (its port for 8546; the config's upstreams are closed ports: no public network
// here; Tron's orders need only the key).

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The lines of the README's sh blocks, comments dropped, in order. */
function readmeBlocks(): string[][] {
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((block) => block[1]!.split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#')));
}

/** The first block: how to install and test. This suite is what its second line runs. */
const INSTALL = ['npm install && npx rpcctl serve', 'npm test'];

const TEST_XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const TEST_ZPUB = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';

const EXPECTED = [
  'rpcctl serve --dev --upstream eth-mainnet=http://127.0.0.1:8546',
  'rpcctl init --local',
  'rpcctl account',
  'rpcctl endpoints create --name main --network eth --env mainnet',
  'rpcctl endpoints list',
  'rpcctl rpc main eth_blockNumber',
  'rpcctl endpoints logs main',
  'rpcctl usage --days 30',
  'rpcctl endpoints allowlist add main 203.0.113.7',
  'rpcctl endpoints allowlist clear main --yes',
  'rpcctl api GET /v1/account --jq .plan.slug',
  'rpcctl auth status',
  'rpcctl watch add --network eth 0x52908400098527886E0F7030069857D2E4169EE7',
  'rpcctl webhook listen --port 4242',
  'rpcctl webhook set --url http://127.0.0.1:4242/ --payment --no-block',
  'rpcctl webhook test --type payment --network eth',
  'rpcctl webhook deliveries',
  'rpcctl events --follow',
  `rpcctl payments settings --xpub ${TEST_XPUB}`,
  'rpcctl payments settings --display-name "Corner Shop" --redirect-url https://shop.example/thanks',
  'rpcctl payments create --order-id 1042 --network eth --amount 12.50 --asset USDC',
  `rpcctl payments settings --xpub-utxo ${TEST_ZPUB} --xpub-tron ${TEST_XPUB}`,
  'rpcctl payments create --order-id 1043 --network tron --amount 25 --asset USDT',
  `rpcctl payments watch "$(rpcctl payments list -n 1 --jq '.[0].payment_id')"`,
  'rpcctl admin accounts create --plan basic --email you@example.com',
  'rpcctl admin login-link --email you@example.com',
];

/** Commands that run until Ctrl-C, and the line that says they are ready. */
const LONG_RUNNING: Array<[RegExp, 'stdout' | 'stderr', RegExp]> = [
  [/^rpcctl serve\b/, 'stdout', /is ready/],
  [/^rpcctl webhook listen\b/, 'stderr', /Listening on/],
  [/^rpcctl events --follow\b/, 'stderr', /Waiting for events/],
  [/^rpcctl payments watch\b/, 'stderr', /Watching pay_/],
];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

interface Background { command: string; child: ResultPromise; out: { stdout: string; stderr: string } }

const background: Background[] = [];
let anvil: Anvil | undefined;

afterAll(async () => {
  for (const b of background.reverse()) if (b.child.exitCode === null) b.child.kill('SIGKILL');
  await anvil?.stop();
});

async function until(ok: () => boolean, what: string, dump: () => string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what} not seen within ${ms} ms\n${dump()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the README, verbatim', () => {
  it('starts with the install and test commands, then lists the commands this test runs', () => {
    const [install, ...rest] = readmeBlocks();
    expect(install).toEqual(INSTALL);
    expect(rest.flat()).toEqual(EXPECTED);
  });

  it('runs line by line from a fresh data dir and config dir, every step succeeding', async () => {
    anvil = await startAnvil();
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-tour-data-'));
    const configDir = mkdtempSync(join(tmpdir(), 'rpcctl-tour-cfg-'));
    const home = mkdtempSync(join(tmpdir(), 'rpcctl-tour-home-'));
    const closed = await freePort();
    const [apiPort, gatewayPort, listenPort] = [await freePort(), await freePort(), await freePort()];
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({
      api: { port: apiPort },
      gateway: { port: gatewayPort },
      // The built-in Ethereum (its tokens) and Tron, on nodes of this machine; Ethereum mainnet
      // is the README's own `--upstream` (anvil's port instead of 8546).
      networks: defaultNetworks.filter((n) => n.slug === 'eth' || n.slug === 'tron').map((n) => ({
        ...n, environments: n.environments.map((e) => ({ ...e, upstreams: [`http://127.0.0.1:${closed}`] })),
      })),
    }));
    const env = { HOME: home, RPCCTL_DATA_DIR: dataDir, RPCCTL_CONFIG_DIR: configDir, NO_COLOR: '1' };
    const outputs = new Map<string, { stdout: string; stderr: string }>();

    for (const line of readmeBlocks().slice(1).flat()) {
      const command = line.replaceAll('4242', String(listenPort)).replaceAll('http://127.0.0.1:8546', anvil.url);
      const long = LONG_RUNNING.find(([re]) => re.test(line));
      if (long) {
        const child = execa('bash', ['-c', `exec ${command}`], { reject: false, env, extendEnv: true });
        const out = { stdout: '', stderr: '' };
        child.stdout!.on('data', (d: Buffer) => { out.stdout += d.toString(); });
        child.stderr!.on('data', (d: Buffer) => { out.stderr += d.toString(); });
        background.push({ command: line, child, out });
        outputs.set(line, out);
        await until(() => long[2].test(out[long[1]]) || child.exitCode !== null, `"${line}" ready`, () => JSON.stringify(out));
        expect(child.exitCode, `${line}: ${out.stderr}`).toBeNull();
        continue;
      }
      // The password `admin accounts create --email` asks for; the other lines read nothing.
      const r = await execa('bash', ['-c', command], { reject: false, env, extendEnv: true, input: 'tour-password-1\n' });
      expect(r.exitCode, `${line}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
      outputs.set(line, { stdout: r.stdout, stderr: r.stderr });
    }

    const out = (prefix: string) => [...outputs].find(([k]) => k.startsWith(prefix))![1];
    expect(out('rpcctl serve').stdout).toContain(`endpoint URLs look like http://rpc-{network}-{env}.localhost:${gatewayPort}/`);
    expect(out('rpcctl init --local').stderr).toContain('Saved profile "local"');
    expect(out('rpcctl account').stdout).toMatch(/^endpoints\t0 of 25$/m); // before the tour creates one
    expect(out('rpcctl endpoints list').stdout).toMatch(/\tmain\teth-mainnet\tactive\t/);
    // Nothing mined since the tour asked: the node's own head.
    const head = await anvil.public.getBlockNumber();
    expect(out('rpcctl rpc main').stdout.trim()).toBe(`0x${head.toString(16)}`);
    expect(out('rpcctl endpoints logs main').stdout).toMatch(/\teth_blockNumber\t200\t\t[\d.]+\t\d+\t127\.0\.0\.1\tfalse\t$/m);
    expect(out('rpcctl api GET').stdout.trim()).toBe('pro');
    expect(out('rpcctl auth status').stdout).toMatch(/status\tworking/);
    expect(out('rpcctl endpoints allowlist add').stderr).toContain('this machine (127.0.0.1) is not on the list');
    expect(out('rpcctl payments create --order-id 1042').stderr).toMatch(/Checkout page for your customer: http:\/\/127\.0\.0\.1:\d+\/pay\/pay_/);
    expect(out('rpcctl admin login-link').stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\/\S+$/m);

    // A payment to the watched address reaches the listener (loopback: --dev) and the feed.
    const listen = out('rpcctl webhook listen');
    const follow = out('rpcctl events --follow');
    const dump = () => `listen: ${JSON.stringify(listen)}\nfollow: ${JSON.stringify(follow)}\nserve: ${JSON.stringify(out('rpcctl serve'))}`;
    await until(() => /\tpayment\teth\t/.test(listen.stdout), 'the test delivery at the listener', dump);
    const hash: Hex = await anvil.wallet.sendTransaction({
      account: anvil.accounts[0] as Address, chain: null, to: '0x52908400098527886E0F7030069857D2E4169EE7', value: 10n ** 18n,
    });
    await until(() => listen.stdout.includes(hash) && follow.stdout.includes(hash), 'the payment at the listener and in the feed', dump);
    expect(listen.stderr).not.toContain('rejected');

    for (const b of [...background].reverse()) {
      b.child.kill('SIGINT');
      const r = await b.child;
      expect(r.exitCode, `${b.command}: ${b.out.stderr}`).toBe(0);
    }
  }, 120_000);
});
