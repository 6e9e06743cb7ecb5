import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { escapeControl } from '../src/cli/format.js';
import { leftOutNote } from '../src/cli/output.js';
import { networkReason } from '../src/client/network-reason.js';
import { cli, cliStarted, tempConfigDir } from './helpers/cli.js';

// What a newcomer and a hostile client see on a terminal: tables that fit 80 and 60 columns
// with statuses and amounts whole, data from outside escaped, a spinner that never tears an
// error line, Ctrl-C = 130, and reasons that say what went wrong. Against a scripted Public API.

const NOW = new Date().toISOString();
const ESC = '\x1b';
const HOSTILE = `eth_call${ESC}[2J${ESC}[31mred\r\n12:00:00  200  eth_fake\u0000`;

const endpoint = (id: number, name: string, status = 'active') => ({
  id, uuid: '0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd', name, status, network_id: 1, network_name: 'Ethereum', network_slug: 'polygon',
  network_environment_id: 1, env_slug: 'mainnet', rps_limit: 50, plan_id: 1, created_at: NOW, version: null, block_height: null,
  allowed_ips: [], url: 'http://rpc-polygon-mainnet.localhost:8545/0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd',
});
const payment = (n: number, status: string, amount: string, symbol: string, reason: string | null = null) => ({
  payment_id: `pay_${String(n).padStart(16, '0')}`, order_id: `shop-order-${n}`, status, reason, network: 'eth-mainnet',
  amount, amount_received: '0', asset: 'native', asset_symbol: symbol, address: `0x${'5290840009852788'.repeat(2)}6E0F7030`,
  created_at: NOW, expires_at: NOW, lifecycle: 'pending', tx_hashes: [], late: false, overpaid: false, aml: null,
  webhook_url: null, watch_id: null, checkout_url: 'http://x/pay', price_amount: null, price_currency: null, rate: null, rate_source: null, rate_at: null,
});

/** The scripted API's answers by path (GET unless the key says otherwise). */
const ROUTES: Record<string, unknown> = {
  '/v1/endpoints': { ok: true, endpoints: [endpoint(1, 'main'), endpoint(22, 'payments-backend-eu-west', 'paused')] },
  '/v1/endpoints/available-networks': {
    ok: true, network_limit: null, allowed_network_slugs: [],
    networks: [{ id: 1, uuid: 'u', name: 'Ethereum', slug: 'eth', sort: 1, environment_kinds: ['mainnet', 'sepolia', 'holesky'] }, { id: 2, uuid: 'v', name: 'Polygon PoS', slug: 'polygon', sort: 2, environment_kinds: ['mainnet', 'amoy'] }],
  },
  '/v1/account/audit': {
    ok: true, next_before: null, retention_days: null, entries: [
      { audit_id: '1234', created_at: NOW, actor: { kind: 'login', id: '7', label: 'someone.with.a.long.address@example.com' }, action: 'endpoint.allowlist', target: { type: 'endpoint', id: '22' }, changes: { allowed_ips: ['203.0.113.7', '2001:db8::1', '198.51.100.0/24'] }, ip: '203.0.113.250' },
    ],
  },
  '/v1/account/usage': { ok: true, usage: { days: 7, total_requests: 10, total_credits: 20, series: [{ date: '2026-01-01', requests: 10, credits: 20 }], methods: [{ method: HOSTILE, requests: 10, credits: 20 }] } },
  '/v1/address-watch/addresses': { ok: true, page: 1, per_page: 200, total: 1, addresses: [{ watch_id: 'w_0123456789abcdef', network_slug: 'eth-mainnet', address: '0x52908400098527886E0F7030069857D2E4169EE7', created_at: NOW }] },
  '/v1/address-watch/deliveries': {
    ok: true, next_before: null, deliveries: [
      { delivery_id: '1042', webhook_id: 'wh_0123456789abcdef01', event_id: 1, type: 'payment', network: 'eth-mainnet', status: 'failed', attempt_count: 5, last_status_code: null, last_error: 'connect ECONNREFUSED 10.0.0.7:443 (the receiver is down)', next_retry_at: NOW, created_at: NOW },
    ],
  },
  '/v1/payments': {
    ok: true, page: 1, per_page: 200, total: 3, payments: [
      payment(1, 'pending', '25', 'USDT'), payment(2, 'failed', '0.006663333333333334', 'ETH', 'expired'), payment(3, 'paid', '1.5', 'ETH'),
    ],
  },
  '/v1/endpoints/1/logs': {
    ok: true, next_before: null, cursor: 'c1', kept_per_worker: 100,
    calls: [{ id: 'r1', at: NOW, method: HOSTILE, status: 200, rpc_code: null, latency_ms: 3, credits: 1, client_ip: '127.0.0.1', cached: false, batch: null }],
  },
  '/v1/endpoints/1': { ok: true, endpoint: endpoint(1, 'main') },
};

let server: Server | undefined;
afterEach(() => { server?.close(); server = undefined; });

async function api(handle?: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<{ env: Record<string, string>; hits: string[] }> {
  const hits: string[] = [];
  server = createServer((req, res) => {
    req.resume();
    hits.push(`${req.method} ${req.url}`);
    if (handle?.(req, res)) return;
    const path = new URL(req.url!, 'http://x').pathname;
    const body = ROUTES[path];
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? { ok: false, error: 'Not found' }));
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { env: { PUBLIC_API_KEY: 'k', PUBLIC_API_SECRET: 's', PUBLIC_API_BASE: base, RPCCTL_CONFIG_DIR: tempConfigDir(), NO_COLOR: '1' }, hits };
}

/** Every table command the Public API feeds. */
const TABLES: string[][] = [
  ['endpoints', 'list'], ['networks'], ['account', 'audit'], ['usage', '--days', '7'], ['watch', 'list'], ['webhook', 'deliveries'], ['payments', 'list'],
];

describe('tables fit the terminal', () => {
  for (const columns of [80, 60]) {
    it(`every table command at ${columns} columns: no line wider, the left-out note too`, async () => {
      const { env } = await api();
      for (const args of TABLES) {
        const r = await cli(args, { env, tty: true, columns });
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        // The table and the note about it; other notes are prose, wrapped by the terminal.
        const note = /\(left out at this width[^)]*\)/.exec(r.stderr)?.[0] ?? '';
        for (const line of [...r.stdout.split('\n'), ...note.split('\n')]) {
          expect(line.length, `${args.join(' ')} at ${columns}: ${line}`).toBeLessThanOrEqual(columns);
        }
      }
    });

    it(`payments list at ${columns} columns: id, status and amount whole; less useful columns left out, not statuses cut`, async () => {
      const { env } = await api();
      const r = await cli(['payments', 'list'], { env, tty: true, columns });
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^PAYMENT ID\s+ORDER\s+STATUS\s+\S*\s*AMOUNT/);
      expect(lines[1]).toMatch(/pay_0000000000000001\s.*\bpending\s+25 USDT\b/);
      expect(lines[3]).toMatch(/pay_0000000000000003\s.*\bpaid\s+1\.5 ETH\b/);
      expect(r.stdout).not.toMatch(/pendi…|US…/);
      expect(r.stderr.replace(/\n(?!$)/g, ' ')).toMatch(/^\(left out at this width: [A-Z, ]*CREATED/);
      if (columns === 80) {
        expect(lines[2]).toMatch(/pay_0000000000000002\s.*\bfailed \(expired\)\s+0\.006663333333333334 ETH\b/);
      } else {
        // 20 + 16 + 24 characters cannot stand whole in 60: only with every other column left
        // out and the order id at its narrowest are they cut.
        expect(lines[0]).toMatch(/^PAYMENT ID\s+ORDER\s+STATUS\s+AMOUNT$/);
        expect(lines[2]).toMatch(/^pay_0000000000000002  shop-…  failed \(exp\S*…\s+0\.00666\S*…$/);
      }
      for (const line of r.stderr.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(columns);
    });
  }

  it('every admin table command at 80 and 60 columns, on a fresh data dir', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-tables-'));
    const admin = (args: string[], opts: { tty?: boolean; columns?: number; stdin?: string } = {}) => cli(['admin', ...args, '--data-dir', dataDir], { ...opts, env: { NO_COLOR: '1' } });
    const made = await admin(['accounts', 'create', '--name', 'a merchant with a rather long name', '--email', 'someone.with.a.long.address@example.com', '--json'], { stdin: 'a long enough password\n' });
    expect(made.code, made.stderr).toBe(0);
    const id = String(JSON.parse(made.stdout).user_id);
    expect((await admin(['keys', 'create', '--account', id, '--allowed-ip', '203.0.113.7', '--allowed-ip', '2001:db8::1'])).code).toBe(0);
    for (const columns of [80, 60]) {
      for (const args of [['accounts', 'list'], ['keys', 'list'], ['plans', 'list'], ['networks', 'list'], ['members', 'list', '--account', id]]) {
        const r = await admin(args, { tty: true, columns });
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        const note = /\(left out at this width[^)]*\)/.exec(r.stderr)?.[0] ?? '';
        for (const line of [...r.stdout.split('\n'), ...note.split('\n')]) {
          expect(line.length, `admin ${args.join(' ')} at ${columns}: ${line}`).toBeLessThanOrEqual(columns);
        }
      }
    }
  });

  it('the left-out note wraps at the width it speaks of', () => {
    const note = leftOutNote(['NETWORK', 'NEXT RETRY', 'CREATED'], 40);
    for (const line of note.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(note.replace(/\n/g, ' ')).toBe('(left out at this width: NETWORK, NEXT RETRY, CREATED; piped output and --json have all)');
  });
});

describe('data from outside is escaped on the terminal and piped; --json stays exact', () => {
  it('escapeControl: ESC, NUL, CR, LF, DEL, C1 and bidi overrides become visible escapes', () => {
    expect(escapeControl(`a${ESC}[31mb\u0000c\r\nd\u007f\u009b\u202e`)).toBe('a\\x1b[31mb\\x00c\\r\\nd\\x7f\\x9b\\u202e');
    expect(escapeControl('plain: é ✓ 漢字')).toBe('plain: é ✓ 漢字');
  });

  it('endpoints logs: a client-chosen method can neither recolour, clear, nor fake a row', async () => {
    const { env } = await api();
    const tty = await cli(['endpoints', 'logs', '1'], { env, tty: true });
    expect(tty.code, tty.stderr).toBe(0);
    expect(tty.stdout).not.toContain(ESC);
    expect(tty.stdout).not.toContain('\u0000');
    expect(tty.stdout).not.toContain('\r');
    expect(tty.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(tty.stdout).toContain('eth_call\\x1b[2J\\x1b[31mred\\r\\n12:00:00  200  eth_fake\\x00');
    const piped = await cli(['endpoints', 'logs', '1'], { env });
    expect(piped.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(piped.stdout.split('\t')).toHaveLength(10);
    expect(piped.stdout).not.toMatch(/[\u0000\u001b\r]/);
    const json = await cli(['endpoints', 'logs', '1', '--json'], { env });
    expect(JSON.parse(json.stdout).method).toBe(HOSTILE);
  });

  it('endpoints rename: the names it repeats (the new one, the one it had) are escaped', async () => {
    const { env } = await api((req, res) => {
      if (!req.url!.startsWith('/v1/endpoints/1')) return false;
      const name = req.method === 'PATCH' ? `new${ESC}]0;title\u0007\u202eevil` : `old${ESC}[2J\u009b31m`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, endpoint: endpoint(1, name) }));
      return true;
    });
    const r = await cli(['endpoints', 'rename', '1', 'whatever'], { env, tty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
    expect(r.stderr).toContain('is now named "new\\x1b]0;title\\x07\\u202eevil" (was "old\\x1b[2J\\x9b31m")');
  });

  it('tables (terminal and piped) escape every cell: a method name in usage', async () => {
    const { env } = await api();
    for (const tty of [true, false]) {
      const r = await cli(['usage', '--days', '7'], { env, tty, columns: 200 });
      expect(r.stdout).not.toMatch(/[\u0000\u001b\r]/);
      expect(r.stdout).toContain('eth_call\\x1b[2J');
    }
    expect(JSON.parse((await cli(['usage', '--days', '7', '--json'], { env })).stdout).methods[0].method).toBe(HOSTILE);
  });
});

describe('errors a newcomer can act on', () => {
  it('the spinner of a call still running is erased before the error of another', async () => {
    const { env } = await api((req, res) => {
      if (req.url === '/v1/account') {
        // Fails once the other call's spinner shows.
        setTimeout(() => res.writeHead(401, { 'content-type': 'application/json' }).end('{"ok":false,"error":"Invalid API key"}'), 700);
        return true;
      }
      return req.url === '/v1/endpoints'; // never answers
    });
    const r = await cli(['account', '--timeout', '5'], { env, tty: true });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/GET \/v1\/(account|endpoints)/); // it did spin
    expect(r.stderr).toMatch(/\r\x1b\[Kerror: Invalid API key/);
    expect(r.stderr.split('error:')[0]!.endsWith('\r\x1b[K')).toBe(true);
  });

  it('Ctrl-C during an API call ends it at once with 130, the spinner erased', async () => {
    const { env, hits } = await api((req) => req.url === '/v1/endpoints'); // never answers
    const running = cliStarted(['endpoints', 'list'], { env, tty: true });
    await running.waitFor(/GET \/v1\/endpoints/, 'stderr');
    expect(hits).toEqual(['GET /v1/endpoints']);
    const r = await running.interrupt();
    expect(r.code).toBe(130);
    expect(r.stderr.endsWith('\r\x1b[K')).toBe(true);
    expect(r.stderr).not.toContain('error');
  });

  it('rpc to a gateway nothing answers says why: connection refused; DNS and timeouts by name', async () => {
    const { env } = await api();
    server!.close();
    const port = new URL(env.PUBLIC_API_BASE!).port;
    const r = await cli(['rpc', `http://localhost:${port}/0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd`, 'eth_blockNumber'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: cannot reach http://localhost:${port}/0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd: connection refused\n`);
    // What undici and Node throw, reasons inside: an AggregateError with an empty message, a fetch "cause".
    expect(networkReason(Object.assign(new AggregateError([Object.assign(new Error(''), { code: 'ECONNREFUSED' })], ''), {}))).toBe('connection refused');
    expect(networkReason(Object.assign(new Error('getaddrinfo ENOTFOUND nosuch.invalid'), { code: 'ENOTFOUND' }))).toBe('host not found (DNS)');
    expect(networkReason(new TypeError('fetch failed', { cause: Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }) }))).toBe('connect timed out');
    expect(networkReason(new Error(''))).toBe('Error');
  });

  it('profile use NAME of no profile exits 4, as -p NAME does', async () => {
    const env = { RPCCTL_CONFIG_DIR: tempConfigDir() };
    const use = await cli(['profile', 'use', 'nosuch'], { env });
    expect(use.code).toBe(4);
    expect(use.stderr).toBe('error: no profile "nosuch" (see: rpcctl profile list)\n');
    expect((await cli(['-p', 'nosuch', 'account'], { env })).code).toBe(4);
  });

  it('an unknown command with --help is an unknown command (exit 2), not the root help', async () => {
    for (const args of [['nosuchcmd', '--help'], ['nosuchcmd', '-h'], ['endpoints', 'nosuchsub', '--help']]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/error: unknown command 'nosuch(cmd|sub)'/);
      expect(r.stdout).toBe('');
    }
    expect((await cli(['endpoints', '--help'])).code).toBe(0);
    expect((await cli(['help', 'endpoints'])).code).toBe(0);
  });

  it('payments create and watch print local times on a terminal, ISO-8601 UTC when piped', async () => {
    const at = '2026-01-31T12:00:00.123Z';
    const paid = { ...payment(9, 'paid', '1', 'ETH'), lifecycle: 'pending>paid', expires_at: at, amount_received: '1' };
    const { env } = await api((req, res) => {
      if (req.url === '/v1/payments' && req.method === 'POST') {
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, created: true, payment: paid }));
        return true;
      }
      if (req.url!.startsWith('/v1/payments/pay_')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, payment: paid }));
        return true;
      }
      return false;
    });
    const local = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/;
    const created = await cli(['payments', 'create', '--order-id', 'o', '--network', 'eth', '--amount', '1'], { env, tty: true });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(new RegExp(`by ${local.source}\\.`));
    expect(created.stderr).not.toContain('.123Z');
    const watched = await cli(['payments', 'watch', paid.payment_id], { env, tty: true });
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout).toMatch(/^\d\d:\d\d:\d\d {2}pending/m);
    expect(watched.stdout).not.toMatch(/\d{4}-\d\d-\d\dT/);
    const piped = await cli(['payments', 'watch', paid.payment_id], { env });
    expect(piped.stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\tpending\t/m);
  });

  it('a rate the service lacks: the API\'s sentence, then what to do', async () => {
    const { env } = await api((req, res) => {
      if (req.url !== '/v1/payments') return false;
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"ok":false,"error":"Rate unavailable for ETH/EUR."}');
      return true;
    });
    const r = await cli(['payments', 'create', '--order-id', 'o', '--network', 'eth', '--price', '19.99', '--currency', 'EUR'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Rate unavailable for ETH\/EUR\. The service's operator sets one: rpcctl admin rates set ETH EUR RATE \(or an http rates source in the config: payments\.rates/);
  });
});
