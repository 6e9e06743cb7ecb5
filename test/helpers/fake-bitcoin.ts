import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Address, OutScript } from '@scure/btc-signer';
import { hex } from '@scure/base';

/** Bitcoin Core's regtest prefixes (chainparams.cpp). */
export const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef };

export interface FakeOutput { value: string; n: number; scriptPubKey: { asm: string; desc: string; hex: string; address?: string; type: string } }
export interface FakeInput { txid?: string; vout?: number; coinbase?: string; sequence: number; txinwitness?: string[] }
export interface FakeTx { txid: string; hash: string; version: number; vin: FakeInput[]; vout: FakeOutput[] }
export interface FakeBlock { hash: string; height: number; previousblockhash?: string; tx: FakeTx[] }

/** An output: to an address (scripted with btc-signer) or a raw script (OP_RETURN). `btc` as Core prints it. */
export type OutSpec = { address: string; btc: string } | { scriptHex: string; btc: string };

const typeOf: Record<string, string> = { wpkh: 'witness_v0_keyhash', wsh: 'witness_v0_scripthash', tr: 'witness_v1_taproot', pkh: 'pubkeyhash', sh: 'scripthash' };

/**
 * Bitcoin Core's JSON-RPC as the scanner and the gateway see it: Basic auth, JSON-RPC 1.0
 * single calls and batches, errors as HTTP 500 with `{result:null,error,id}` (404 for an
 * unknown method), amounts as 8-decimal JSON numbers. `getblock` verbosity 3 carries `prevout`
 * (Core >= 25); with `legacy` set the node behaves like an older one (verbosity 3 answered as
 * 2) and prevouts must come from `getrawtransaction`.
 */
export class FakeBitcoinCore {
  readonly chain: FakeBlock[] = [];
  readonly calls: string[] = [];
  legacy = false;
  url = '';
  readonly user = 'rpcuser';
  readonly password = 'rpc:pass word';
  readonly #txs = new Map<string, FakeTx>();
  readonly #server: Server;

  constructor() {
    this.mine([]); // genesis
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const expected = `Basic ${Buffer.from(`${this.user}:${this.password}`).toString('base64')}`;
        if (req.headers.authorization !== expected) return res.writeHead(401, { 'www-authenticate': 'Basic realm="jsonrpc"' }).end();
        let payload: unknown;
        try { payload = JSON.parse(Buffer.concat(chunks).toString()); } catch {
          return res.writeHead(500, { 'content-type': 'application/json' }).end('{"result":null,"error":{"code":-32700,"message":"Parse error"},"id":null}\n');
        }
        if (Array.isArray(payload)) {
          const answers = payload.map((c) => this.#answer(c as Call).body);
          return res.writeHead(200, { 'content-type': 'application/json' }).end(`[${answers.join(',')}]\n`);
        }
        const { status, body } = this.#answer(payload as Call);
        res.writeHead(status, { 'content-type': 'application/json' }).end(`${body}\n`);
      });
    });
  }

  get height(): number { return this.chain.length - 1; }

  /** A transaction; inputs name earlier outputs (`txid:vout`). */
  tx(inputs: Array<{ txid: string; vout: number }>, outputs: OutSpec[]): FakeTx {
    const vout = outputs.map((o, n): FakeOutput => {
      if ('scriptHex' in o) return { value: o.btc, n, scriptPubKey: { asm: 'OP_RETURN', desc: 'raw()', hex: o.scriptHex, type: 'nulldata' } };
      const decoded = Address(REGTEST).decode(o.address);
      const script = hex.encode(OutScript.encode(decoded));
      return { value: o.btc, n, scriptPubKey: { asm: '', desc: `addr(${o.address})`, hex: script, address: o.address, type: typeOf[decoded.type] ?? 'nonstandard' } };
    });
    const vin = inputs.map((i): FakeInput => ({ txid: i.txid, vout: i.vout, sequence: 4294967293, txinwitness: [] }));
    const txid = createHash('sha256').update(randomBytes(32)).digest('hex');
    return { txid, hash: txid, version: 2, vin, vout };
  }

  /** Mines a block on the tip with a coinbase paying `coinbaseTo` (or an OP_RETURN). */
  mine(txs: FakeTx[], coinbaseTo?: string): FakeBlock {
    const height = this.chain.length;
    const coinbase = coinbaseTo ? this.tx([], [{ address: coinbaseTo, btc: '50.00000000' }]) : this.tx([], [{ scriptHex: '6a', btc: '0.00000000' }]);
    coinbase.vin = [{ coinbase: `03${height.toString(16).padStart(6, '0')}`, sequence: 4294967295 }];
    const block: FakeBlock = { hash: randomBytes(32).toString('hex'), height, ...(height > 0 ? { previousblockhash: this.chain[height - 1]!.hash } : {}), tx: [coinbase, ...txs] };
    this.chain.push(block);
    for (const t of block.tx) this.#txs.set(t.txid, t);
    return block;
  }

  /** Drops the top `depth` blocks (their transactions leave the chain with them). */
  orphan(depth: number): FakeBlock[] {
    const gone = this.chain.splice(this.chain.length - depth, depth);
    for (const b of gone) for (const t of b.tx) this.#txs.delete(t.txid);
    return gone;
  }

  #answer(call: Call): { status: number; body: string } {
    const id = call.id ?? null;
    const method = call.method ?? '';
    const params = call.params ?? [];
    this.calls.push(method);
    const ok = (result: unknown) => ({ status: 200, body: amountsAsNumbers(JSON.stringify({ result, error: null, id })) });
    const fail = (status: number, code: number, message: string) => ({ status, body: JSON.stringify({ result: null, error: { code, message }, id }) });
    switch (method) {
      case 'getblockchaininfo':
        return ok({ chain: 'regtest', blocks: this.height, headers: this.height, bestblockhash: this.chain.at(-1)!.hash, initialblockdownload: false });
      case 'getblockcount': return ok(this.height);
      case 'getnetworkinfo': return ok({ version: 270000, subversion: '/Satoshi:27.0.0/' });
      case 'getblockhash': {
        const h = params[0];
        if (typeof h !== 'number' || h < 0 || h > this.height) return fail(500, -8, 'Block height out of range');
        return ok(this.chain[h]!.hash);
      }
      case 'getblock': {
        // From the top: asked blocks sit near it, and the simulator's chain grows to many thousands.
        const block = this.chain.findLast((b) => b.hash === params[0]);
        if (!block) return fail(500, -5, 'Block not found');
        const verbosity = this.legacy ? Math.min(Number(params[1] ?? 1), 2) : Number(params[1] ?? 1);
        const base = { hash: block.hash, confirmations: this.height - block.height + 1, height: block.height, previousblockhash: block.previousblockhash, nTx: block.tx.length };
        if (verbosity < 2) return ok({ ...base, tx: block.tx.map((t) => t.txid) });
        const tx = block.tx.map((t) => ({ ...t, vin: t.vin.map((v) => (verbosity >= 3 && v.txid ? { ...v, prevout: this.#prevout(v) } : v)) }));
        return ok({ ...base, tx });
      }
      case 'getrawtransaction': {
        const t = this.#txs.get(String(params[0]));
        if (!t) return fail(500, -5, 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.');
        return ok(params[1] ? t : 'deadbeef');
      }
      default: return fail(404, -32601, 'Method not found');
    }
  }

  #prevout(v: FakeInput) {
    const out = this.#txs.get(v.txid!)?.vout[v.vout!];
    if (!out) throw new Error(`fake: unknown output ${v.txid}:${v.vout}`);
    return { generated: false, height: 0, value: out.value, scriptPubKey: out.scriptPubKey };
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    const port = (this.#server.address() as AddressInfo).port;
    this.url = `http://${encodeURIComponent(this.user)}:${encodeURIComponent(this.password)}@127.0.0.1:${port}/`;
    return this;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}

type Call = { id?: unknown; method?: string; params?: unknown[] };

/** Core prints amounts as JSON numbers with 8 decimals: "value":0.50000000. */
function amountsAsNumbers(json: string): string {
  return json.replace(/"value":"(-?\d+\.\d{8})"/g, '"value":$1');
}

/** A fresh regtest address of each kind (random keys: only the scripts matter here). */
export function regtestAddress(kind: 'wpkh' | 'tr' | 'pkh' | 'sh' | 'wsh'): string {
  const coder = Address(REGTEST);
  switch (kind) {
    case 'wpkh': return coder.encode({ type: 'wpkh', hash: randomBytes(20) });
    case 'wsh': return coder.encode({ type: 'wsh', hash: randomBytes(32) });
    case 'tr': {
      // Half of all 32-byte strings are no x coordinate on the curve: keep one that is.
      for (;;) {
        const pubkey = randomBytes(32);
        try {
          OutScript.encode({ type: 'tr', pubkey });
          return coder.encode({ type: 'tr', pubkey });
        } catch { /* try another */ }
      }
    }
    case 'pkh': return coder.encode({ type: 'pkh', hash: randomBytes(20) });
    case 'sh': return coder.encode({ type: 'sh', hash: randomBytes(20) });
  }
}
