import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

interface Proc { child: ResultPromise; stdout: () => string; stderr: () => string }
const procs: Proc[] = [];
let chain: FakeEvm | undefined;
afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await chain?.close();
});

function start(args: string[], env: Record<string, string>): Proc {
  const child = execa(process.execPath, [bin, ...args], { reject: false, env, extendEnv: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const p = { child, stdout: () => stdout, stderr: () => stderr };
  procs.push(p);
  return p;
}

async function until(ok: () => boolean, what: string, dump: () => string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what} not seen within ${ms} ms\n${dump()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('events --follow across a restart of rpcctl serve', () => {
  it('notes the lost connection, reconnects with backoff, and prints what was recorded meanwhile and after', async () => {
    chain = await startFakeEvmChain();
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-restart-'));
    const apiPort = await freePort();
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({
      api: { port: apiPort }, gateway: { port: 0 },
      networks: [{ slug: 'eth', name: 'Ethereum', family: 'evm', environments: [{ id: 1, slug: 'mainnet', upstreams: [chain.url] }] }],
    }));
    const env = { RPCCTL_DATA_DIR: dataDir, RPCCTL_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'rpcctl-restart-cfg-')), NO_COLOR: '1', PUBLIC_API_KEY: '', PUBLIC_API_SECRET: '', PUBLIC_API_BASE: '' };
    const run = (args: string[]) => execa(process.execPath, [bin, ...args], { reject: false, env, extendEnv: true, input: '' });

    let serve = start(['serve', '--dev'], env);
    await until(() => serve.stdout().includes('is ready'), 'serve ready', serve.stderr);
    expect((await run(['init', '--local'])).exitCode).toBe(0);
    expect((await run(['watch', 'add', '--network', 'eth', ADDRESS])).exitCode).toBe(0);

    const follow = start(['events', '--follow', '--interval', '0.2'], env);
    const dump = () => `follow stdout: ${follow.stdout()}\nfollow stderr: ${follow.stderr()}\nserve: ${serve.stderr()}`;
    await until(() => follow.stderr().includes('Waiting for events'), 'follow waiting', dump);

    const pay = () => chain!.mine([{ from: '0x1111111111111111111111111111111111111111', to: ADDRESS, wei: 10n ** 18n }]).txs[0]!.hash;
    const first = pay();
    await until(() => follow.stdout().includes(first), 'the first payment', dump);

    serve.child.kill('SIGINT');
    expect((await serve.child).exitCode).toBe(0);
    await until(() => /cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused; reconnecting in \d+ s/.test(follow.stderr()), 'the lost-connection note', dump);
    const whileDown = pay(); // recorded by the scanner once the service is back

    serve = start(['serve', '--dev'], env);
    await until(() => serve.stdout().includes('is ready'), 'serve ready again', serve.stderr);
    await until(() => follow.stderr().includes('reconnected to'), 'the reconnected note', dump);
    const after = pay();
    await until(() => follow.stdout().includes(whileDown) && follow.stdout().includes(after), 'the payments after the restart', dump);
    expect(follow.child.exitCode).toBeNull();

    // Each event once, in order, none lost.
    const hashes = follow.stdout().trim().split('\n').map((l) => l.split('\t')[9]);
    expect(hashes).toEqual([first, whileDown, after]);

    follow.child.kill('SIGINT');
    expect((await follow.child).exitCode).toBe(0);
    serve.child.kill('SIGINT');
    expect((await serve.child).exitCode).toBe(0);
  }, 120_000);
});
