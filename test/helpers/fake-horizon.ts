import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A StrKey account id for 32 random bytes (version byte 6 << 3, CRC16-XModem little-endian). */
export function stellarAccount(): string {
  const payload = Buffer.concat([Buffer.from([6 << 3]), randomBytes(32)]);
  let crc = 0;
  for (const b of payload) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  const bytes = Buffer.concat([payload, Buffer.from([crc & 0xff, crc >> 8])]);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

export interface FakeLedger {
  sequence: number;
  hash: string;
  prev_hash: string;
  txs: Array<{ hash: string; paging_token: string }>;
  payments: Array<Record<string, unknown>>;
}

/** Just enough of Horizon: the root, ledgers, and their transactions and payments, paged by cursor. */
export async function startFakeHorizon(): Promise<{ url: string; addLedger(payments: Array<Record<string, unknown>>): FakeLedger; close(): Promise<void> }> {
  const ledgers = new Map<number, FakeLedger>();
  let latest = 0;
  const addLedger = (payments: Array<Record<string, unknown>>): FakeLedger => {
    const sequence = latest + 1;
    const txs = [...new Set(payments.map((p) => p.transaction_hash as string))].map((hash, i) => ({ hash, paging_token: `${sequence}-${i}` }));
    const ledger = {
      sequence, hash: randomBytes(32).toString('hex'), prev_hash: ledgers.get(latest)?.hash ?? '00'.repeat(32), txs,
      payments: payments.map((p, i) => ({ transaction_successful: true, ...p, paging_token: `${sequence}-${i}` })),
    };
    ledgers.set(sequence, ledger);
    latest = sequence;
    return ledger;
  };
  for (let i = 0; i < 100; i++) addLedger([]);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/') return send(200, { history_latest_ledger: latest });
    const m = /^\/ledgers\/(\d+)(?:\/(transactions|payments))?$/.exec(url.pathname);
    const ledger = m && ledgers.get(Number(m[1]));
    if (!ledger) return send(404, { status: 404 });
    if (!m[2]) return send(200, ledger);
    const all: Array<{ paging_token: string }> = m[2] === 'transactions' ? ledger.txs : ledger.payments as never;
    const cursor = url.searchParams.get('cursor');
    const start = cursor ? all.findIndex((r) => r.paging_token === cursor) + 1 : 0;
    return send(200, { _embedded: { records: all.slice(start, start + Number(url.searchParams.get('limit') ?? 10)) } });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    addLedger,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
