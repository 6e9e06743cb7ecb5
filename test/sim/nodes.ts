import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeBitcoinCore, regtestAddress, type FakeBlock, type FakeTx } from '../helpers/fake-bitcoin.js';
import { FakeTron, tronAccount, type FakeTronBlock } from '../helpers/fake-tron.js';
import { stellarAccount } from '../helpers/fake-horizon.js';
import { SimChain, type SimBlock } from './chain.js';
import { FakeEvm, type FakeEvmBlock } from '../helpers/fake-evm.js';
import { generateKeyPairSync } from 'node:crypto';
import { getAddressDecoder, getBase58Decoder, getBase58Encoder } from '@solana/kit';

export type SimFamily = 'evm' | 'utxo' | 'tron' | 'stellar' | 'solana';

/**
 * One fake node per family, speaking the protocol the family's scanner speaks, serving the
 * simulator's canonical chain: whatever the chain model says is what the node answers,
 * forks included (a block the model dropped is gone, its height answers the new branch).
 */
export interface SimNode {
  family: SimFamily;
  chain: SimChain;
  url: string;
  /** The network's `confirmations` and (where the config knows it) `finality_depth`. */
  confirmations: number;
  finality: number;
  /** The catalog network this node backs. */
  network(upstream: string, extra: Record<string, unknown>): Record<string, unknown>;
  /** A fresh address: as an order is given it, and as the node prints it in a transaction. */
  address(): { given: string; wire: string };
  /** Told after the chain changed (mined or orphaned), so nodes that keep their own view follow. */
  sync(): void;
  close(): Promise<void>;
  /**
   * A transaction or block hash as the node printed it, back in the model's 64 hex digits, where
   * the node prints them otherwise (Solana's base58); others are the hex itself, any case, any 0x.
   */
  hex?(printed: string): string;
}

function listen(server: Server): Promise<string> {
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}
const closer = (server: Server) => () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });

/** EVM JSON-RPC: the suites' one fake EVM node, serving the model's canonical chain (with eth_getBlockReceipts). */
async function evmNode(chain: SimChain): Promise<SimNode> {
  const hx = (h: string) => `0x${h}`;
  const converted = new Map<string, FakeEvmBlock>();
  const block = (b: SimBlock | undefined): FakeEvmBlock | undefined => {
    if (!b) return undefined;
    let out = converted.get(b.hash);
    if (!out) {
      out = { height: b.height, hash: hx(b.hash), parentHash: hx(b.parent), txs: b.txs.map((t) => ({ hash: hx(t.hash), from: t.from, to: t.to, value: `0x${t.amount.toString(16)}` })) };
      converted.set(b.hash, out);
    }
    return out;
  };
  const node = await new FakeEvm({ chain: { head: () => chain.head, block: (h) => block(chain.at(h)) } }).start();
  let n = 0;
  const addr = () => {
    const a = `0x${chain.id(`addr${n++}`).slice(0, 40)}`;
    return { given: a, wire: a };
  };
  return {
    family: 'evm', chain, url: node.url, confirmations: 2, finality: 4, address: addr, sync() {}, close: () => node.stop(),
    network: (upstream, extra) => ({ slug: 'simevm', name: 'Sim EVM', family: 'evm', environments: [{ slug: 'sim', upstreams: [upstream], confirmations: 2, ...extra }] }),
  };
}

/** Bitcoin Core RPC (the shared fake, its chain kept equal to the model's; verbosity 3 with `prevout`). */
async function utxoNode(chain: SimChain): Promise<SimNode> {
  const core = await new FakeBitcoinCore().start();
  const payers = new Map<string, FakeTx['vout'][number]['scriptPubKey']>();
  const converted = new Map<string, FakeBlock>();
  const btc = (sat: bigint) => `${sat / 100_000_000n}.${(sat % 100_000_000n).toString().padStart(8, '0')}`;
  const convert = (b: SimBlock): FakeBlock => {
    let out = converted.get(b.hash);
    if (out) return out;
    const coinbase = core.tx([], [{ scriptHex: '6a', btc: '0.00000000' }]);
    coinbase.txid = coinbase.hash = `c0${b.hash.slice(2)}`;
    coinbase.vin = [{ coinbase: `03${b.height.toString(16).padStart(6, '0')}`, sequence: 4294967295 }];
    const txs = b.txs.map((t) => {
      const tx = core.tx([], [{ address: t.to, btc: btc(t.amount) }]);
      tx.txid = tx.hash = t.hash;
      // The spent output inline (Core >= 25 at verbosity 3): no txid, so the fake keeps it as given.
      tx.vin = [{ sequence: 4294967293, prevout: { generated: false, height: 0, value: btc(t.amount + 1000n), scriptPubKey: payers.get(t.from)! } } as never];
      return tx;
    });
    out = { hash: b.hash, height: b.height, ...(b.height > 0 ? { previousblockhash: b.parent } : {}), tx: [coinbase, ...txs] };
    converted.set(b.hash, out);
    return out;
  };
  const sync = () => {
    // Only the top can differ: forks are shallow.
    let i = Math.max(0, Math.min(core.chain.length, chain.blocks.length) - 16);
    while (i < chain.blocks.length && core.chain[i]?.hash === chain.blocks[i]!.hash) i++;
    core.chain.splice(i, core.chain.length - i, ...chain.blocks.slice(i).map(convert));
  };
  sync();
  return {
    family: 'utxo', chain, url: core.url, confirmations: 2, finality: 4,
    address: () => {
      const a = regtestAddress('wpkh');
      const probe = core.tx([], [{ address: a, btc: '0.00000001' }]);
      payers.set(a, probe.vout[0]!.scriptPubKey);
      return { given: a, wire: a };
    },
    sync, close: () => core.stop(),
    network: (upstream, extra) => ({ slug: 'simbtc', name: 'Sim Bitcoin', family: 'utxo', environments: [{ slug: 'regtest', upstreams: [upstream], confirmations: 2, ...extra }] }),
  };
}

/** Tron HTTP API (the shared fake, its chain kept equal to the model's); TRX transfers. */
async function tronNode(chain: SimChain): Promise<SimNode> {
  const fake = await new FakeTron().start();
  const id = (height: number, hash: string) => height.toString(16).padStart(16, '0') + hash.slice(16);
  const converted = new Map<string, FakeTronBlock>();
  const convert = (b: SimBlock): FakeTronBlock => {
    let out = converted.get(b.hash);
    if (out) return out;
    const transactions = b.txs.map((t) => ({ ...fake.trx(t.from, t.to, t.amount.toString()), txID: t.hash }));
    out = { blockID: id(b.height, b.hash), number: b.height, parentHash: id(b.height - 1, b.parent), transactions };
    converted.set(b.hash, out);
    return out;
  };
  const sync = () => {
    let i = Math.max(0, Math.min(fake.chain.length, chain.blocks.length) - 16);
    while (i < chain.blocks.length && fake.chain[i]?.blockID === id(chain.blocks[i]!.height, chain.blocks[i]!.hash)) i++;
    fake.chain.splice(i, fake.chain.length - i, ...chain.blocks.slice(i).map(convert));
  };
  sync();
  return {
    family: 'tron', chain, url: fake.url, confirmations: 2, finality: 4,
    address: () => { const a = tronAccount(); return { given: a.base58, wire: a.hex }; },
    sync, close: () => fake.stop(),
    network: (upstream, extra) => ({ slug: 'simtron', name: 'Sim Tron', family: 'tron', environments: [{ slug: 'sim', upstreams: [upstream], confirmations: 2, ...extra }] }),
  };
}

/** Horizon: the root's latest ledger, ledgers with `prev_hash`, their transactions and payments, paged by cursor. */
async function stellarNode(chain: SimChain): Promise<SimNode> {
  const xlm = (stroops: bigint) => `${stroops / 10_000_000n}.${(stroops % 10_000_000n).toString().padStart(7, '0')}`;
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/') return send(200, { history_latest_ledger: chain.head, core_latest_ledger: chain.head });
    const m = /^\/ledgers\/(\d+)(?:\/(transactions|payments))?$/.exec(url.pathname);
    const b = m ? chain.at(Number(m[1])) : undefined;
    if (!m || !b) return send(404, { type: 'https://stellar.org/horizon-errors/not_found', status: 404 });
    if (!m[2]) return send(200, { id: b.hash, paging_token: String(b.height), hash: b.hash, prev_hash: b.parent, sequence: b.height, successful_transaction_count: b.txs.length });
    const all = m[2] === 'transactions'
      ? b.txs.map((t, i) => ({ hash: t.hash, paging_token: `${b.height}-${i}`, successful: true }))
      : b.txs.map((t, i) => ({
        paging_token: `${b.height}-${i}`, type: 'payment', transaction_hash: t.hash, transaction_successful: true,
        from: t.from, to: t.to, amount: xlm(t.amount), asset_type: 'native', source_account: t.from,
      }));
    const cursor = url.searchParams.get('cursor');
    const start = cursor ? all.findIndex((r) => r.paging_token === cursor) + 1 : 0;
    return send(200, { _embedded: { records: all.slice(start, start + Number(url.searchParams.get('limit') ?? 10)) } });
  });
  const url = await listen(server);
  return {
    family: 'stellar', chain, url, confirmations: 1, finality: 1,
    address: () => { const a = stellarAccount(); return { given: a, wire: a }; },
    sync() {}, close: closer(server),
    network: (upstream, extra) => ({ slug: 'simxlm', name: 'Sim Stellar', family: 'stellar', environments: [{ slug: 'sim', upstreams: [upstream], confirmations: 1, ...extra }] }),
  };
}

/** A fresh ed25519 public key as a Solana address (base58 by kit's own codec). */
export function solanaAccount(): string {
  const der = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
  return getAddressDecoder().decode(new Uint8Array(der.subarray(der.length - 32)));
}

/**
 * Solana JSON-RPC over the model: a height is a slot (none skipped: test/helpers/fake-solana.ts
 * is the node with skipped slots and real transactions), `getSlot` at confirmed the head and at
 * finalized `finality` below it, `getBlocks`, and `getBlock` with each transfer's lamport
 * balances before and after (the fee taken from the payer), as `encoding: 'json'` gives them.
 */
async function solanaNode(chain: SimChain): Promise<SimNode> {
  const finality = 4;
  const b58 = getBase58Decoder();
  const hashOf = (hex: string) => b58.decode(Buffer.from(hex, 'hex'));
  const signatureOf = (hex: string) => b58.decode(Buffer.concat([Buffer.from(hex, 'hex'), Buffer.from(hex, 'hex')]));
  const block = (b: SimBlock, details: string) => {
    const txs = b.txs.map((t) => ({
      // A Solana Pay transfer names its reference after the system program's accounts (read-only, no balance change).
      transaction: { signatures: [signatureOf(t.hash)], message: { accountKeys: [t.from, t.to, '11111111111111111111111111111111', ...t.reference ? [t.reference] : []] } },
      meta: {
        err: null, fee: 5000,
        preBalances: [(t.amount + 1_000_000_000n).toString(), '0', '1', ...t.reference ? ['0'] : []],
        postBalances: [(1_000_000_000n - 5000n).toString(), t.amount.toString(), '1', ...t.reference ? ['0'] : []],
      },
    }));
    const full = { blockhash: hashOf(b.hash), previousBlockhash: hashOf(b.parent), parentSlot: b.height - 1, blockHeight: b.height, blockTime: null };
    if (details === 'none') return full;
    if (details === 'signatures') return { ...full, signatures: txs.map((t) => t.transaction.signatures[0]) };
    return { ...full, transactions: txs };
  };
  const answer = (call: { id: unknown; method: string; params?: unknown[] }) => {
    const p = call.params ?? [];
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id: call.id, result });
    const fail = (code: number, message: string) => ({ jsonrpc: '2.0', id: call.id, error: { code, message } });
    switch (call.method) {
      case 'getHealth': return ok('ok');
      case 'getVersion': return ok({ 'solana-core': 'sim' });
      case 'getSlot': return ok((p[0] as { commitment?: string } | undefined)?.commitment === 'finalized' ? Math.max(0, chain.head - finality) : chain.head);
      case 'getBlocks': {
        // No slot skipped: the heights from..to, counted rather than filtered out of the whole chain.
        const from = Math.max(Number(p[0]), chain.first);
        const to = Math.min(Number(p[1] ?? chain.head), chain.head);
        return ok(Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i));
      }
      case 'getBlock': {
        const b = chain.at(Number(p[0]));
        if (!b) return fail(-32004, `Block not available for slot ${String(p[0])}`);
        return ok(block(b, (p[1] as { transactionDetails?: string } | undefined)?.transactionDetails ?? 'full'));
      }
      default: return fail(-32601, 'Method not found');
    }
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c; });
    req.on('end', () => {
      const parsed = JSON.parse(body) as Parameters<typeof answer>[0] | Array<Parameters<typeof answer>[0]>;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  const url = await listen(server);
  return {
    family: 'solana', chain, url, confirmations: 1, finality,
    address: () => { const a = solanaAccount(); return { given: a, wire: a }; },
    sync() {}, close: closer(server),
    // A signature is the hash twice (64 bytes), a blockhash the hash: the first 32 bytes either way.
    hex: (printed) => Buffer.from(getBase58Encoder().encode(printed)).subarray(0, 32).toString('hex'),
    network: (upstream, extra) => ({ slug: 'simsol', name: 'Sim Solana', family: 'solana', environments: [{ slug: 'sim', upstreams: [upstream], confirmations: 1, ...extra }] }),
  };
}

export async function startNode(family: SimFamily): Promise<SimNode> {
  switch (family) {
    case 'evm': return evmNode(new SimChain('evm', 0, 10));
    case 'utxo': return utxoNode(new SimChain('utxo', 0, 10));
    case 'tron': return tronNode(new SimChain('tron', 0, 10));
    case 'stellar': return stellarNode(new SimChain('stellar', 1, 10));
    case 'solana': return solanaNode(new SimChain('solana', 0, 10));
  }
}
