import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, execaSync, type ResultPromise } from 'execa';
import { ApiClient } from '../../src/client/index.js';
import { testConfig } from './service.js';

/**
 * Harness for the Python, PHP and Go client libraries (clients/*): a real `rpcctl serve`
 * process, merchants made with `rpcctl admin`, and the README examples pulled out as programs.
 */

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const bin = join(repoRoot, 'bin/rpcctl.js');

/** Upstreams nobody answers on: the clients never send JSON-RPC, and adding a watch must not reach a public node. */
const dead = ['http://127.0.0.1:1'];
export const clientTestConfig = testConfig({
  networks: [
    { id: 1, slug: 'eth', name: 'Ethereum', family: 'evm', environments: [{ id: 1, slug: 'mainnet', upstreams: dead }, { id: 2, slug: 'sepolia', upstreams: dead }] },
    // Each library also watches a Solana public key: base58, case-sensitive, unlike an EVM address.
    { id: 2, slug: 'solana', name: 'Solana', family: 'solana', environments: [{ id: 3, slug: 'mainnet', upstreams: dead }] },
  ],
  // The libraries' receivers listen on loopback, which the SSRF guard refuses unless the operator allows it.
  webhooks: { allow_private_urls: true, timeout_ms: 2000 },
});

export interface Toolchain {
  available: boolean;
  /** Why the language's tests are skipped, when they are. */
  reason: string;
}

/** Is `cmd` runnable? The tests of a language without its toolchain are skipped, saying why. */
export function toolchain(cmd: string, checkArgs: string[], debianPackages: string, needs = `${cmd} on PATH`): Toolchain {
  // reject: false turns a missing binary (ENOENT) into a failed result rather than a throw.
  if (execaSync(cmd, checkArgs, { reject: false }).exitCode === 0) return { available: true, reason: '' };
  const reason = `no ${needs} (Debian: apt-get install ${debianPackages}; .ci/run installs it)`;
  return { available: false, reason };
}

export interface Serve {
  apiUrl: string;
  dataDir: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startServe(): Promise<Serve> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-clients-'));
  const configFile = join(dataDir, 'rpcctl.json');
  writeFileSync(configFile, JSON.stringify(clientTestConfig));
  const serve: ResultPromise = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], {
    reject: false, all: true, env: { RPCCTL_MASTER_KEY: '' },
  });
  let output = '';
  const apiUrl = await new Promise<string>((resolve, reject) => {
    serve.all!.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /api\s+(http:\/\/\S+)/.exec(output);
      if (m) resolve(m[1]!);
    });
    serve.once('exit', () => reject(new Error(`serve exited early:\n${output}`)));
  });
  return {
    apiUrl, dataDir, output: () => output,
    async stop() {
      serve.kill('SIGTERM');
      await serve;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ClientMerchant {
  userId: number;
  /** PUBLIC_API_KEY, PUBLIC_API_SECRET, PUBLIC_API_BASE and RPCCTL_WEBHOOK_SECRET, as a program sees them. */
  env: Record<string, string>;
  webhookSecret: string;
  /** The TypeScript client on the same key, to check what the other language did. */
  ts: ApiClient;
}

async function admin(serve: Serve, args: string[]): Promise<any> {
  const r = await execa(process.execPath, [bin, 'admin', ...args, '--json', '--data-dir', serve.dataDir], { reject: false, env: { NO_COLOR: '1', RPCCTL_MASTER_KEY: '' } });
  if (r.exitCode !== 0) throw new Error(`rpcctl admin ${args.join(' ')}: exit ${r.exitCode}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** A pro-plan account with one key, made the way an operator does: `rpcctl admin`. */
export async function createMerchant(serve: Serve): Promise<ClientMerchant> {
  const { user_id: userId } = await admin(serve, ['accounts', 'create', '--plan', 'pro']) as { user_id: number };
  const key = await admin(serve, ['keys', 'create', '--account', String(userId)]) as { api_key: string; secret: string };
  const { secret: webhookSecret } = await admin(serve, ['webhook-secret', '--account', String(userId)]) as { secret: string };
  return {
    userId, webhookSecret,
    env: { PUBLIC_API_KEY: key.api_key, PUBLIC_API_SECRET: key.secret, PUBLIC_API_BASE: serve.apiUrl, RPCCTL_WEBHOOK_SECRET: webhookSecret },
    ts: new ApiClient({ baseUrl: serve.apiUrl, apiKey: key.api_key, secret: key.secret }),
  };
}

/** What every language's integration program prints as its last line. */
export interface IntegrationReport {
  endpoint_id: number;
  allowed_ips: string[];
  bad_request: { status: number; error: string; code: string };
  /** An unknown endpoint asked for: its status and the library's error code. */
  not_found: { status: number; code: string };
  watch_id: string;
  /** The watch of a Solana public key on `solana`. */
  solana_watch_id: string;
  webhook_id: string;
  event: Record<string, unknown>;
  wrong_secret_refused: boolean;
  /** The endpoint's name after the program renamed it. */
  renamed: string;
  /** The order it made (twice: the second answered `created: false`), then canceled. */
  payment: { payment_id: string; order_id: string; address: string; created_again: boolean };
  /** The `payment_order` webhook the cancel sent, as its receiver verified it. */
  payment_event: Record<string, unknown>;
  /** A refund of that canceled order (it received nothing): the service's refusal as the library reports it. */
  refund_refused: { status: number; code: string; error: string };
  /**
   * The payout of one line it made, found in the list filtered by status, then canceled;
   * `awaiting_total` is that filtered list's `total` before and after the cancel.
   */
  payout: { payout_id: string; listed: boolean; status: string; awaiting_total: [number, number] };
  /** The `payout_line` webhook the cancel sent, as its receiver verified it. */
  payout_event: Record<string, unknown>;
  /** `wallets.solana` as read back from the settings, and the Solana order paid to it. */
  solana: { wallet: string; payment_id: string; reference: string };
  /** The test delivery it redelivered, and how often the receiver verified that webhook id. */
  redelivered: { delivery_id: string; webhook_id: string; arrivals: number };
}

/** The Solana public key each library watches and sets as the merchant's wallet. */
export const SOLANA_WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
/** Where each library's payout line pays (it is canceled before anything is sent). */
export const PAYOUT_ADDRESS = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';

/** BIP32 test vector 1's master public key (depth 0): the integration programs set it as the EVM xpub. */
export const TEST_XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';

export function lastJsonLine<T>(stdout: string): T {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}

export interface CodeBlock {
  /** The info string after the fence, e.g. `python` or `python receiver`. */
  info: string;
  code: string;
}

/** Fenced code blocks of a README, in order. */
export function readmeBlocks(readmePath: string): CodeBlock[] {
  const text = readFileSync(readmePath, 'utf8');
  const blocks: CodeBlock[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```\s*$/gm;
  for (let m = fence.exec(text); m; m = fence.exec(text)) blocks.push({ info: m[1]!.trim(), code: m[2]! });
  return blocks;
}

/** A scratch directory under the OS temp dir, removed by the returned function. */
export function scratch(prefix: string): { dir: string; sub(name: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    sub(name) {
      const p = join(dir, name);
      mkdirSync(p, { recursive: true });
      return p;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Waits until the loopback `url` accepts a TCP connection (a README receiver has started). */
export async function waitForPort(port: number, ms = 20_000): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A free loopback port, for a README receiver that takes its port from $PORT. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface LanguageHarness {
  /** Display name, e.g. `Python`. */
  name: string;
  /** Folder under clients/. */
  dir: string;
  toolchain: Toolchain;
  /** Fence info string of the README's runnable examples (`python`, `php`, `go`). */
  fence: string;
  /** Lines the unit-test output must show: the vector tests ran and passed (a runner that finds no tests also exits 0). */
  unitPassed: RegExp[];
  /** The language's own unit-test runner over the vectors. */
  unit(): { cmd: string; args: string[]; cwd: string; env?: Record<string, string> };
  /** The integration program; its last stdout line is an IntegrationReport. */
  integration(): { cmd: string; args: string[]; cwd: string; env?: Record<string, string> };
  /**
   * How a README example runs as written, e.g. saved as a file of a fresh project that installs
   * the library the way the README says. `receiver` examples must listen on $PORT.
   */
  example(code: string, index: number, work: string, kind: 'script' | 'receiver'): { cmd: string; args: string[]; cwd: string; env?: Record<string, string> };
  /**
   * The README's install from a clone (its `sh from-repo` block), in a fresh project: `script`
   * gets the block's lines (`/path/to/rpcctl` already a copy of this checkout) and returns a
   * shell script that runs them and then uses the installed library, printing
   * `rpcctl client installed`. `toolchain`: what the install needs beyond the language.
   */
  install: { toolchain: Toolchain; script(lines: string[], work: string): string; env?: Record<string, string> };
}
