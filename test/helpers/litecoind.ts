import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import type { ConfigInput } from '../../src/config/index.js';
import { getAccount, webhookSecretOf } from '../../src/store/index.js';
import { startReceiver, type Receiver } from './receiver.js';
import { startTestService, type Merchant, type TestService } from './service.js';

type NetworkInput = NonNullable<ConfigInput['networks']>[number];

/**
 * A real UTXO node for tests: Litecoin Core in regtest (Debian ships it; not bitcoind), on
 * spare ports in a temp dir. It speaks Bitcoin Core's JSON-RPC of its 0.21 base.
 */
export const haveLitecoind = await new Promise<boolean>((resolve) => {
  const p = spawn('litecoind', ['-version'], { stdio: 'ignore' });
  p.on('error', () => resolve(false));
  p.on('exit', (code) => resolve(code === 0));
});

export const LITECOIND_MISSING = 'litecoind is not installed (apt-get install litecoind; .ci/run does)';

export interface Litecoind {
  /** JSON-RPC 1.0 as Bitcoin Core takes it; `wallet` routes to `/wallet/<name>`. */
  rpc<T = any>(method: string, params?: unknown[], wallet?: string): Promise<T>;
  /** The network entry for the service's config: regtest prefixes, credentials in the URL. */
  network(): NetworkInput;
  stop(): Promise<void>;
}

export async function until(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** `args`: more of litecoind's options (`-mempoolreplacement=1`: relay BIP125 replacements, off by default in Litecoin Core). */
export async function startLitecoind(opts: { args?: string[] } = {}): Promise<Litecoind> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-ltc-'));
  const [rpcPort, p2pPort] = [await freePort(), await freePort()];
  const proc: ChildProcess = spawn('litecoind', [
    '-regtest', `-datadir=${dataDir}`, `-rpcport=${rpcPort}`, `-port=${p2pPort}`, '-rpcbind=127.0.0.1', '-rpcallowip=127.0.0.1',
    '-rpcuser=rpcctl', '-rpcpassword=regtest', '-txindex', '-fallbackfee=0.0001', '-listen=0', '-server', '-printtoconsole=0',
    ...(opts.args ?? []),
  ], { stdio: 'ignore' });
  const rpcUrl = `http://127.0.0.1:${rpcPort}/`;
  const auth = `Basic ${Buffer.from('rpcctl:regtest').toString('base64')}`;
  let id = 0;
  async function rpc<T = any>(method: string, params: unknown[] = [], wallet?: string): Promise<T> {
    const res = await request(`${rpcUrl}${wallet ? `wallet/${wallet}` : ''}`, {
      method: 'POST', headers: { authorization: auth, 'content-type': 'text/plain' },
      body: JSON.stringify({ jsonrpc: '1.0', id: ++id, method, params }),
    });
    const body = await res.body.json() as { result: T; error: { message: string } | null };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  }
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      await rpc('stop').catch(() => proc.kill('SIGTERM'));
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await until(async () => rpc('getblockchaininfo').then(() => true, () => false), 60_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    rpc, stop,
    network: (): NetworkInput => ({
      id: 20, slug: 'litecoin', name: 'Litecoin', family: 'utxo',
      environments: [{ id: 40, slug: 'regtest', upstreams: [`http://rpcctl:regtest@127.0.0.1:${rpcPort}/`], confirmations: 1, address_format: { bech32: 'rltc', pub_key_hash: 111, script_hash: 58 } }],
    }),
  };
}

/** `rpcctl serve` scanning `node` (150 ms polls), a merchant on it and the merchant's webhook secret. */
export async function serveOn(node: Litecoind, extra: ConfigInput = {}): Promise<{ t: TestService; m: Merchant; secret: string }> {
  const t = await startTestService({
    networks: [node.network()],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    gateway: { probe_interval_ms: 60_000 },
    ...extra,
  }, { watch: { pollMs: 150, delivery: { pollMs: 50 } } });
  const m = await t.merchant({ plan: 'pro' });
  return { t, m, secret: webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!) };
}

/** The BIP39 test vector "abandon … about": the master key the payouts suites' merchant signs with. */
const TEST_VECTOR_SEED = mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const TESTNET = { private: 0x04358394, public: 0x043587cf };

/**
 * A blank wallet `name` holding the test vector's master tprv as BIP84 descriptors (receive and
 * change, 0-20), so Core knows each key's origin and `walletprocesspsbt` signs rpcctl's PSBTs.
 * A legacy wallet through importmulti: Debian's litecoind is built without descriptor wallets.
 * Answers importmulti's success flag per descriptor.
 */
export async function importTestVectorWallet(node: Litecoind, name: string): Promise<boolean[]> {
  await node.rpc('createwallet', [name, false, true]);
  const tprv = HDKey.fromMasterSeed(TEST_VECTOR_SEED, TESTNET).privateExtendedKey;
  const descriptors = await Promise.all([0, 1].map(async (chain) => {
    const { checksum } = await node.rpc<{ checksum: string }>('getdescriptorinfo', [`wpkh(${tprv}/84h/1h/0h/${chain}/*)`]);
    return { desc: `wpkh(${tprv}/84h/1h/0h/${chain}/*)#${checksum}`, timestamp: 'now', range: [0, 20] };
  }));
  return (await node.rpc<Array<{ success: boolean }>>('importmulti', [descriptors], name)).map((r) => r.success);
}

/** The test vector's BIP84 account key, with its origin: what the payouts suites' merchant gives rpcctl. */
export const TEST_VECTOR_XPUB = "[73c5da0a/84'/1'/0']vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc";

export interface WalletMerchant {
  node: Litecoind;
  t: TestService;
  m: Merchant;
  secret: string;
  rx: Receiver;
  /** An address of wallet `w`, whose 101 blocks make its coins spendable. */
  miner: string;
  mine(n: number): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * A merchant whose wallet is Litecoin Core (`merchant`, the test vector's keys) on a litecoind
 * -regtest: `w` mined to spendable coins, the `wallets` asked for, a webhook receiver, `serve`
 * on the node's network with `finalityDepth`, and the merchant's xpub set for orders.
 */
export async function walletMerchant(o: { finalityDepth: number; wallets?: string[]; args?: string[] }): Promise<WalletMerchant> {
  const node = await startLitecoind({ args: o.args });
  for (const name of ['w', ...(o.wallets ?? [])]) await node.rpc('createwallet', [name]);
  const miner = await node.rpc<string>('getnewaddress', ['', 'bech32'], 'w');
  const mine = (n: number) => node.rpc<string[]>('generatetoaddress', [n, miner]);
  await mine(101);
  const imported = await importTestVectorWallet(node, 'merchant');
  if (!imported.every(Boolean)) throw new Error(`importmulti refused the test vector's descriptors: ${JSON.stringify(imported)}`);
  const rx = await startReceiver();
  const network = node.network();
  network.environments![0]!.finality_depth = o.finalityDepth;
  const { t, m, secret } = await serveOn(node, { networks: [network], payments: { tick_ms: 50, aml: { provider: 'none' } } });
  const settings = await m.call('PUT', '/v1/payments/settings', JSON.stringify({ xpubs: { utxo: TEST_VECTOR_XPUB } }));
  if (settings.status !== 200) throw new Error(`payment settings: ${settings.status} ${JSON.stringify(settings.body)}`);
  return {
    node, t, m, secret, rx, miner, mine,
    async stop() {
      await t.stop();
      await rx.close();
      await node.stop();
    },
  };
}
