import type { ChainAdapter, FetchedBlock, Hit, WatchLookup, WatchRef } from '../family.js';
import { ScanUpstreamError, UpstreamPool } from '../rpc.js';

interface HorizonLedger {
  sequence: number;
  hash: string;
  prev_hash: string;
}

interface HorizonPage<T> {
  _embedded: { records: T[] };
}

/** The value-moving records of `/ledgers/{n}/payments`. */
interface HorizonPayment {
  paging_token: string;
  type: string;
  transaction_hash: string;
  transaction_successful?: boolean;
  from?: string;
  to?: string;
  funder?: string;
  account?: string;
  amount?: string;
  starting_balance?: string;
  source_amount?: string;
  asset_type?: string;
  asset_code?: string;
  asset_issuer?: string;
  source_asset_type?: string;
  source_asset_code?: string;
  source_asset_issuer?: string;
}

const PAGE = 200;

/**
 * Stellar through Horizon: a ledger is a block. Payments, path payments and account
 * creations give payment/payout hits; `token` is `CODE:ISSUER` for issued assets and null
 * for XLM, `amount` is in stroops (7 decimals).
 */
export class StellarChain implements ChainAdapter {
  readonly #pool: UpstreamPool;

  constructor(upstreams: string[], timeoutMs?: number) {
    this.#pool = new UpstreamPool(upstreams, timeoutMs);
  }

  async head(): Promise<number> {
    const root = await this.#get<{ history_latest_ledger: number }>('/');
    if (!root) throw new ScanUpstreamError('Horizon root not found');
    return root.history_latest_ledger;
  }

  async blockHash(height: number): Promise<string | undefined> {
    return (await this.#get<HorizonLedger>(`/ledgers/${height}`))?.hash;
  }

  async block(height: number, registry: WatchLookup, envId: number): Promise<FetchedBlock | undefined> {
    const ledger = await this.#get<HorizonLedger>(`/ledgers/${height}`);
    if (!ledger) return undefined;
    const txs = await this.#all<{ hash: string; paging_token: string }>(`/ledgers/${height}/transactions?include_failed=true`);
    const payments = registry.size(envId) === 0 ? [] : await this.#all<HorizonPayment>(`/ledgers/${height}/payments?include_failed=false`);
    return { hash: ledger.hash, parentHash: ledger.prev_hash, txHashes: txs.map((t) => t.hash), hits: matchStellarPayments(registry, envId, payments) };
  }

  async #all<T extends { paging_token?: string }>(path: string): Promise<T[]> {
    const out: T[] = [];
    for (let cursor = ''; ;) {
      const page = await this.#get<HorizonPage<T>>(`${path}&order=asc&limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const records = page?._embedded.records ?? [];
      out.push(...records);
      if (records.length < PAGE) return out;
      cursor = records[records.length - 1]!.paging_token ?? '';
      if (!cursor) return out;
    }
  }

  #get<T>(path: string): Promise<T | undefined> {
    return this.#pool.use(`GET ${path.split('?')[0]}`, async (base) => {
      const res = await this.#pool.fetch(base.replace(/\/+$/, '') + path, { method: 'GET' });
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw new ScanUpstreamError(`GET ${path.split('?')[0]}: Horizon answered HTTP ${res.status}`);
      return JSON.parse(res.text) as T;
    });
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

export function matchStellarPayments(registry: WatchLookup, envId: number, records: readonly HorizonPayment[]): Hit[] {
  const hits: Hit[] = [];
  for (const p of records) {
    if (p.transaction_successful === false) continue;
    const sides = sidesOf(p);
    if (!sides) continue;
    const { from, to, sent, received } = sides;
    const add = (watches: WatchRef[] | undefined, type: 'payment' | 'payout', amount: Amount) => {
      for (const w of watches ?? []) {
        hits.push({ watch: w, type, direction: type === 'payment' ? 'in' : 'out', txHash: p.transaction_hash, from, to, token: amount.token, amount: amount.raw, logIndex: null });
      }
    };
    add(registry.lookup(envId, from), 'payout', sent);
    add(registry.lookup(envId, to), 'payment', received);
  }
  return hits;
}

interface Amount {
  token: string | null;
  raw: string;
}

function sidesOf(p: HorizonPayment): { from: string; to: string; sent: Amount; received: Amount } | undefined {
  switch (p.type) {
    case 'payment': {
      const a = { token: asset(p.asset_type, p.asset_code, p.asset_issuer), raw: stroops(p.amount) };
      return { from: p.from!, to: p.to!, sent: a, received: a };
    }
    case 'path_payment_strict_receive':
    case 'path_payment_strict_send':
      return {
        from: p.from!, to: p.to!,
        sent: { token: asset(p.source_asset_type, p.source_asset_code, p.source_asset_issuer), raw: stroops(p.source_amount) },
        received: { token: asset(p.asset_type, p.asset_code, p.asset_issuer), raw: stroops(p.amount) },
      };
    case 'create_account': {
      const a = { token: null, raw: stroops(p.starting_balance) };
      return { from: p.funder!, to: p.account!, sent: a, received: a };
    }
    default:
      return undefined;
  }
}

function asset(type: string | undefined, code: string | undefined, issuer: string | undefined): string | null {
  return type === undefined || type === 'native' ? null : `${code}:${issuer}`;
}

/** Horizon amounts have exactly 7 decimals: "10.5000000" is 105000000 stroops. */
export function stroops(amount: string | undefined): string {
  if (!amount) return '0';
  const [whole = '0', frac = ''] = amount.split('.');
  return (BigInt(whole) * 10_000_000n + BigInt(frac.padEnd(7, '0').slice(0, 7))).toString();
}
