import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sha256 } from '@noble/hashes/sha2';
import { createBase58check, hex } from '@scure/base';

const b58 = createBase58check(sha256);

/** A random Tron account: `T…` and its `41…` hex form. */
export function tronAccount(): { base58: string; hex: string } {
  const bytes = Buffer.concat([Buffer.from([0x41]), randomBytes(20)]);
  return { base58: b58.encode(bytes), hex: bytes.toString('hex') };
}

export const USDT = { base58: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', hex: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' };
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface FakeTronTx {
  txID: string;
  ret: Array<{ contractRet: string }>;
  raw_data: { contract: Array<{ type: string; parameter: { value: Record<string, unknown>; type_url: string } }>; timestamp: number };
  /** Not part of the block: the transaction info's logs. */
  logs?: Array<{ address: string; topics: string[]; data: string }>;
}

export interface FakeTronBlock { blockID: string; number: number; parentHash: string; transactions: FakeTronTx[] }

const pad32 = (h: string) => h.padStart(64, '0');

/**
 * The Tron HTTP API as java-tron and TronGrid answer it: POST `/wallet/getnowblock`,
 * `/wallet/getblockbynum` (`{}` for a block it lacks), `/wallet/gettransactioninfobyblocknum`;
 * addresses in hex (the default, `visible: false`), int64 amounts as bare JSON numbers.
 */
export class FakeTron {
  readonly chain: FakeTronBlock[] = [];
  readonly paths: string[] = [];
  url = '';
  readonly #server: Server;
  readonly #holds = new Map<number, { arrive: () => void; wait: Promise<void> }>();

  /**
   * The next `/wallet/getblockbynum` for block `num` waits until `release()`: a test forces an
   * interleaving (a look at the block answered only after others have moved on). `arrived`
   * resolves when that request comes in.
   */
  hold(num: number): { arrived: Promise<void>; release: () => void } {
    let arrive!: () => void;
    let release!: () => void;
    const arrived = new Promise<void>((r) => { arrive = r; });
    const wait = new Promise<void>((r) => { release = r; });
    this.#holds.set(num, { arrive, wait });
    return { arrived, release };
  }

  constructor() {
    this.mine([]);
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0]!;
        this.paths.push(path);
        let body: Record<string, unknown> = {};
        try { body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown> : {}; } catch {
          return send(200, { Error: 'class com.google.gson.JsonSyntaxException : malformed JSON' });
        }
        const num = Number(body.num);
        const held = path === '/wallet/getblockbynum' ? this.#holds.get(num) : undefined;
        if (held) {
          this.#holds.delete(num);
          held.arrive();
          void held.wait.then(() => send(200, this.chain[num] ? this.#block(this.chain[num]) : {}));
          return;
        }
        switch (path) {
          case '/wallet/getnowblock': return send(200, this.#block(this.chain.at(-1)!));
          case '/wallet/getblockbynum': return send(200, this.chain[num] ? this.#block(this.chain[num]) : {});
          case '/wallet/gettransactioninfobyblocknum': return send(200, this.chain[num] ? this.#infos(this.chain[num]) : []);
          default: return res.writeHead(404, { 'content-type': 'text/html' }).end('<html>404</html>');
        }
        function send(status: number, value: unknown) {
          const text = JSON.stringify(value).replace(/"(amount|call_value)":"(\d+)"/g, '"$1":$2');
          res.writeHead(status, { 'content-type': 'application/json' }).end(text);
        }
      });
    });
  }

  get height(): number { return this.chain.length - 1; }

  trx(from: string, to: string, sun: string, ret = 'SUCCESS'): FakeTronTx {
    return this.#tx('TransferContract', { amount: sun, owner_address: from, to_address: to }, ret);
  }

  trc10(from: string, to: string, tokenId: string, amount: string): FakeTronTx {
    return this.#tx('TransferAssetContract', { amount, asset_name: Buffer.from(tokenId).toString('hex'), owner_address: from, to_address: to }, 'SUCCESS');
  }

  /** `transfer(to, amount)` on a TRC-20 contract; a failed one (REVERT) has no logs. */
  trc20(contract: string, from: string, to: string, amount: bigint, ret = 'SUCCESS'): FakeTronTx {
    const data = `a9059cbb${pad32(to.slice(2))}${pad32(amount.toString(16))}`;
    const tx = this.#tx('TriggerSmartContract', { data, owner_address: from, contract_address: contract }, ret);
    if (ret === 'SUCCESS') tx.logs = [{ address: contract.slice(2), topics: [TRANSFER_TOPIC, pad32(from.slice(2)), pad32(to.slice(2))], data: pad32(amount.toString(16)) }];
    return tx;
  }

  /** A successful contract call that moves nothing (an approve). */
  call(contract: string, from: string): FakeTronTx {
    return this.#tx('TriggerSmartContract', { data: `095ea7b3${'00'.repeat(64)}`, owner_address: from, contract_address: contract }, 'SUCCESS');
  }

  mine(transactions: FakeTronTx[]): FakeTronBlock {
    const number = this.chain.length;
    const parentHash = this.chain.at(-1)?.blockID ?? '0'.repeat(64);
    // Tron block ids start with the block number (8 bytes) followed by 24 bytes of the header hash.
    const blockID = number.toString(16).padStart(16, '0') + randomBytes(24).toString('hex');
    const block = { blockID, number, parentHash, transactions };
    this.chain.push(block);
    return block;
  }

  orphan(depth: number): void {
    this.chain.splice(this.chain.length - depth, depth);
  }

  #tx(type: string, value: Record<string, unknown>, ret: string): FakeTronTx {
    return {
      txID: createHash('sha256').update(randomBytes(32)).digest('hex'),
      ret: [{ contractRet: ret }],
      raw_data: { contract: [{ type, parameter: { value, type_url: `type.googleapis.com/protocol.${type}` } }], timestamp: Date.now() },
    };
  }

  #block(b: FakeTronBlock) {
    return {
      blockID: b.blockID,
      block_header: { raw_data: { number: b.number, txTrieRoot: '0'.repeat(64), witness_address: '41' + '11'.repeat(20), parentHash: b.parentHash, version: 31, timestamp: Date.now() }, witness_signature: '00' },
      ...(b.transactions.length ? { transactions: b.transactions.map(({ logs: _logs, ...t }) => ({ ...t, signature: ['00'], raw_data_hex: '00' })) } : {}),
    };
  }

  #infos(b: FakeTronBlock) {
    return b.transactions.map((t) => ({
      id: t.txID, fee: 345000, blockNumber: b.number, blockTimeStamp: Date.now(), contractResult: [''],
      ...(t.raw_data.contract[0]!.type === 'TriggerSmartContract'
        ? { contract_address: t.raw_data.contract[0]!.parameter.value.contract_address, receipt: { energy_usage_total: 14650, net_usage: 345, result: t.ret[0]!.contractRet }, log: t.logs ?? [] }
        : { receipt: { net_usage: 268 } }),
    }));
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}

export { hex };
