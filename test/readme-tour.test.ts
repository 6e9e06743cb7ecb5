import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeEvmChain, type FakeEvmChain } from './helpers/fake-evm.js';

// The README's tour, command by command, with the real binary: what a newcomer types after
// `npm link`. Only what cannot be verbatim on a shared machine differs: the data and config
// dirs are fresh temp dirs, the service's ports come from a config file in the data dir (the
// tour's commands find it there), 4242 becomes a free port, and Ethereum mainnet is a fake
// EVM node on loopback (no public network here).

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The `rpcctl` lines of the sh blocks of the README's "A short tour" section, comments dropped. */
function tourCommands(): string[] {
  const start = readme.indexOf('## A short tour');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  const lines: string[] = [];
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split('\n')) {
      const command = line.replace(/\s+#.*$/, '').trim();
      if (command.startsWith('rpcctl ')) lines.push(command);
    }
  }
  return lines;
}

const EXPECTED = [
  'rpcctl serve --dev',
  'rpcctl init --local',
  'rpcctl account',
  'rpcctl endpoints create --name main --network eth --env mainnet',
  'rpcctl endpoints list',
  'rpcctl rpc main eth_blockNumber',
  'rpcctl usage --days 30',
  'rpcctl endpoints allowlist add main 203.0.113.7',
  'rpcctl api GET /v1/account --jq .plan.slug',
  'rpcctl auth status',
  'rpcctl watch add --network eth 0x52908400098527886E0F7030069857D2E4169EE7',
  'rpcctl webhook listen --port 4242',
  'rpcctl webhook set --url http://127.0.0.1:4242/ --payment --no-block',
  'rpcctl webhook test --type payment --network eth',
  'rpcctl webhook deliveries',
  'rpcctl events --follow',
];

/** Commands that run until Ctrl-C, and the line that says they are ready. */
const LONG_RUNNING: Array<[RegExp, 'stdout' | 'stderr', RegExp]> = [
  [/^rpcctl serve\b/, 'stdout', /is ready/],
  [/^rpcctl webhook listen\b/, 'stderr', /Listening on/],
  [/^rpcctl events --follow\b/, 'stderr', /Waiting for events/],
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
let chain: FakeEvmChain | undefined;

afterAll(async () => {
  for (const b of background.reverse()) if (b.child.exitCode === null) b.child.kill('SIGKILL');
  await chain?.close();
});

async function until(ok: () => boolean, what: string, dump: () => string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what} not seen within ${ms} ms\n${dump()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the README tour', () => {
  it('lists the commands this test runs', () => {
    expect(tourCommands()).toEqual(EXPECTED);
  });

  it('runs line by line from a fresh data dir and config dir, every step succeeding', async () => {
    chain = await startFakeEvmChain();
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-tour-data-'));
    const configDir = mkdtempSync(join(tmpdir(), 'rpcctl-tour-cfg-'));
    const [apiPort, gatewayPort, listenPort] = [await freePort(), await freePort(), await freePort()];
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({
      api: { port: apiPort },
      gateway: { port: gatewayPort },
      networks: [{ slug: 'eth', name: 'Ethereum', family: 'evm', environments: [{ id: 1, slug: 'mainnet', upstreams: [chain.url] }] }],
    }));
    const env = {
      RPCCTL_DATA_DIR: dataDir, RPCCTL_CONFIG_DIR: configDir, NO_COLOR: '1',
      PUBLIC_API_KEY: '', PUBLIC_API_SECRET: '', PUBLIC_API_BASE: '', RPCCTL_WEBHOOK_SECRET: '',
    };
    const outputs = new Map<string, { stdout: string; stderr: string }>();

    for (const line of tourCommands()) {
      const args = line.replaceAll('4242', String(listenPort)).split(/\s+/).slice(1);
      expect(args.join(' '), 'the tour uses no quoting').not.toMatch(/["'\\]/);
      const long = LONG_RUNNING.find(([re]) => re.test(line));
      if (long) {
        const child = execa(process.execPath, [bin, ...args], { reject: false, env, extendEnv: true });
        const out = { stdout: '', stderr: '' };
        child.stdout!.on('data', (d: Buffer) => { out.stdout += d.toString(); });
        child.stderr!.on('data', (d: Buffer) => { out.stderr += d.toString(); });
        background.push({ command: line, child, out });
        outputs.set(line, out);
        await until(() => long[2].test(out[long[1]]) || child.exitCode !== null, `"${line}" ready`, () => JSON.stringify(out));
        expect(child.exitCode, `${line}: ${out.stderr}`).toBeNull();
        continue;
      }
      const r = await execa(process.execPath, [bin, ...args], { reject: false, env, extendEnv: true, input: '' });
      expect(r.exitCode, `${line}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
      outputs.set(line, { stdout: r.stdout, stderr: r.stderr });
    }

    const out = (prefix: string) => [...outputs].find(([k]) => k.startsWith(prefix))![1];
    expect(out('rpcctl serve').stdout).toContain(`endpoint URLs look like http://rpc-{network}-{env}.localhost:${gatewayPort}/`);
    expect(out('rpcctl init --local').stderr).toContain('Saved profile "local"');
    expect(out('rpcctl account').stdout).toMatch(/^endpoints\t0 of 25$/m); // before the tour creates one
    expect(out('rpcctl endpoints list').stdout).toMatch(/\tmain\teth-mainnet\tactive\t/);
    expect(out('rpcctl rpc main').stdout.trim()).toBe('0x9');
    expect(out('rpcctl api GET').stdout.trim()).toBe('pro');
    expect(out('rpcctl auth status').stdout).toMatch(/status\tworking/);

    // A payment to the watched address reaches the listener (loopback: --dev) and the feed.
    const listen = out('rpcctl webhook listen');
    const follow = out('rpcctl events --follow');
    const dump = () => `listen: ${JSON.stringify(listen)}\nfollow: ${JSON.stringify(follow)}\nserve: ${JSON.stringify(out('rpcctl serve'))}`;
    await until(() => /\tpayment\teth\t/.test(listen.stdout), 'the test delivery at the listener', dump);
    const { txs } = chain.mine([{ from: '0x1111111111111111111111111111111111111111', to: '0x52908400098527886E0F7030069857D2E4169EE7', wei: 10n ** 18n }]);
    await until(() => listen.stdout.includes(txs[0]!.hash) && follow.stdout.includes(txs[0]!.hash), 'the payment at the listener and in the feed', dump);
    expect(listen.stderr).not.toContain('rejected');

    for (const b of [...background].reverse()) {
      b.child.kill('SIGINT');
      const r = await b.child;
      expect(r.exitCode, `${b.command}: ${b.out.stderr}`).toBe(0);
    }
  }, 120_000);
});
