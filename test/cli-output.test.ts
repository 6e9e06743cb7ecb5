import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { formatAmount, localTime, relativeTime, shortHex, units } from '../src/cli/format.js';
import { fitWidths, Output, shownColumns } from '../src/cli/output.js';
import { cli, tempConfigDir } from './helpers/cli.js';

const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

function tty(columns: number | undefined, isTTY = true) {
  let text = '';
  const stdout = Object.assign(new Writable({ write(c, _e, cb) { text += c.toString(); cb(); } }), { isTTY, columns });
  const out = new Output({ stdout, stderr: stdout, stdin: process.stdin, env: {} } as never, {});
  return { out, text: () => text };
}

describe('tables fit the terminal', () => {
  const rows = [
    { id: 12, name: 'payments-backend', status: 'active', url: 'http://rpc-eth-mainnet.localhost:8545/0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd', note: 'a'.repeat(40) },
    { id: 3, name: 'x', status: 'paused', url: 'http://rpc-polygon-amoy.localhost:8545/213d8570-bafd-4b50-837a-56a4c87d7093', note: '' },
  ];
  const columns = [
    { header: 'ID', value: (r: typeof rows[number]) => r.id, keep: true },
    { header: 'NAME', value: (r: typeof rows[number]) => r.name, keep: true },
    { header: 'STATUS', value: (r: typeof rows[number]) => r.status },
    { header: 'NOTE', value: (r: typeof rows[number]) => r.note },
    { header: 'URL', value: (r: typeof rows[number]) => r.url },
  ];

  it('at 80 columns: widest columns cut with …, ids and names whole, two spaces between columns', () => {
    const { out, text } = tty(80);
    out.table(rows, columns);
    const lines = visible(text()).trimEnd().split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^ID  NAME {14}STATUS  NOTE/);
    expect(lines[1]).toMatch(/^12  payments-backend  active  a+…  http:\/\/rpc-eth-\S*…$/);
    expect(lines[2]).toMatch(/^3 {3}x {17}paused/);
  });

  it('wide enough: nothing is cut', () => {
    const { out, text } = tty(250);
    out.table(rows, columns);
    expect(visible(text())).toContain(rows[0]!.url);
    expect(visible(text())).not.toContain('…');
  });

  it('piped: tab-separated and whole, whatever the width', () => {
    const { out, text } = tty(40, false);
    out.table(rows, columns);
    expect(text().split('\n')[0]).toBe(`12\tpayments-backend\tactive\t${'a'.repeat(40)}\t${rows[0]!.url}`);
  });

  it('fitWidths: the widest gives way first, never below its minimum, kept columns never', () => {
    expect(fitWidths([2, 10, 30, 30], [true, true, false, false], [2, 4, 6, 6], 50)).toEqual([2, 10, 16, 16]);
    expect(fitWidths([2, 10, 30], [true, true, false], [2, 4, 6], 10)).toEqual([2, 10, 6]);
    expect(fitWidths([2, 10], [false, false], [2, 4], undefined)).toEqual([2, 10]);
    // With priorities the least useful column gives way first, however narrow it already is.
    expect(fitWidths([10, 30, 20], [false, false, false], [6, 6, 6], 50, [0, 1, 0])).toEqual([8, 30, 8]);
    expect(fitWidths([10, 30, 20], [false, false, false], [6, 6, 6], 40, [0, 1, 0])).toEqual([6, 24, 6]);
  });

  it('shownColumns: below-zero priorities are left out, least useful first, only when even the narrowest widths do not fit', () => {
    expect(shownColumns([8, 8, 8], [0, -1, -2], 30)).toEqual([true, true, true]);
    expect(shownColumns([8, 8, 8], [0, -1, -2], 20)).toEqual([true, true, false]);
    expect(shownColumns([8, 8, 8], [0, -1, -2], 9)).toEqual([true, false, false]);
    expect(shownColumns([8, 8, 8], [0, -1, -2], undefined)).toEqual([true, true, true]);
  });

  it('an empty list says what to do next, on stderr', () => {
    const { out, text } = tty(80);
    out.table([], columns, 'No endpoints yet. Create one: rpcctl endpoints create ...');
    expect(text()).toBe('No endpoints yet. Create one: rpcctl endpoints create ...\n');
  });
});

describe('endpoints list at 80 columns', () => {
  let server: Server | undefined;
  afterEach(() => { server?.close(); });

  it('is readable: one line per endpoint, the URL cut, the name whole', async () => {
    const endpoint = (id: number, name: string) => ({
      id, uuid: '0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd', name, status: 'active', network_slug: 'polygon', env_slug: 'mainnet',
      allowed_ips: [], url: `http://rpc-polygon-mainnet.localhost:8545/0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd`,
    });
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, endpoints: [endpoint(1, 'main'), endpoint(22, 'payments-backend-eu-west')] }));
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const env = { PUBLIC_API_KEY: 'k', PUBLIC_API_SECRET: 's', PUBLIC_API_BASE: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, RPCCTL_CONFIG_DIR: tempConfigDir(), NO_COLOR: '1' };
    const r = await cli(['endpoints', 'list'], { env, tty: true, columns: 80 });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[2]).toMatch(/^22  payments-backend-eu-west  polygon-mainnet  active  any  http:\/\/rpc-polygon\S+…$/);
    const piped = await cli(['endpoints', 'list'], { env });
    expect(piped.stdout.split('\n')[1]).toBe(`22\tpayments-backend-eu-west\tpolygon-mainnet\tactive\tany\t${endpoint(22, '').url}`);
  });
});

describe('values for people', () => {
  it('relative times like gh, local times, ISO kept when unparseable', () => {
    const now = Date.parse('2026-01-31T12:00:00Z');
    expect(relativeTime('2026-01-31T11:59:58Z', now)).toBe('just now');
    expect(relativeTime('2026-01-31T11:59:00Z', now)).toBe('1m ago');
    expect(relativeTime('2026-01-31T09:00:00Z', now)).toBe('3h ago');
    expect(relativeTime('2026-01-29T12:00:00Z', now)).toBe('2d ago');
    expect(relativeTime('2026-01-31T12:00:29Z', now)).toBe('in 29s');
    expect(relativeTime('2025-06-01T12:00:00Z', now)).toBe(localTime('2025-06-01T12:00:00Z').slice(0, 10));
    expect(localTime('2026-01-31T12:00:00Z')).toMatch(/^2026-01-3\d \d\d:00:00$/);
    expect(relativeTime('soon', now)).toBe('soon');
  });

  it('amounts in units with the raw value; tokens and unknown networks raw', () => {
    expect(units(10n ** 18n, 18)).toBe('1');
    expect(units(1500000000000000000n, 18)).toBe('1.5');
    expect(units(5n, 18)).toBe('0.000000000000000005');
    expect(formatAmount({ network: 'eth', amount: '1000000000000000000', token: null })).toBe('1 ETH (1000000000000000000 wei)');
    expect(formatAmount({ network: 'eth-sepolia', amount: '2500000000000000000', token: null }, false)).toBe('2.5 ETH');
    expect(formatAmount({ network: 'stellar', amount: '125000000' })).toBe('12.5 XLM (125000000 stroops)');
    expect(formatAmount({ network: 'eth', amount: '42', token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' })).toBe('42 (raw) of token 0xA0b8…eB48');
    expect(formatAmount({ network: 'mychain', amount: '7', token: null })).toBe('7 (raw)');
    expect(shortHex('0x52908400098527886E0F7030069857D2E4169EE7')).toBe('0x5290…9EE7');
  });
});
