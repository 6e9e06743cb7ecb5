import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { numberToDecimal, priceToBaseUnits } from '../src/payments/fiat.js';
import { implausibleRate } from '../src/payments/rates.js';
import { cli, tempConfigDir } from './helpers/cli.js';
import { FakeBitcoinCore, regtestAddress } from './helpers/fake-bitcoin.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const HEADER_SECRET = 'rate-api-key-do-not-log';
const json = (o: unknown) => JSON.stringify(o);

/**
 * A price API on loopback, shaped like the ones operators pay for: `{data: {ETH: {USD: 3000.5}},
 * ts}`. It refuses requests without the operator's key header, and can be taken down.
 */
interface FakeRates {
  url: string;
  prices: Record<string, Record<string, unknown>>;
  /** Unix seconds the answer claims to be priced at (default: now). */
  ts?: number;
  down: boolean;
  /** Bytes of filler in each answer. */
  pad: number;
  requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

async function startFakeRates(): Promise<FakeRates> {
  const state: FakeRates = { url: '', prices: {}, down: false, pad: 0, requests: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    state.requests.push(req.headers);
    if (state.down) return res.writeHead(503).end('maintenance');
    if (req.headers['x-api-key'] !== HEADER_SECRET) return res.writeHead(401).end('{"error":"key"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end(json({ data: state.prices, ts: state.ts ?? Date.now() / 1000, pad: 'x'.repeat(state.pad) }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/prices?symbol={asset}`;
  state.close = () => new Promise((r) => server.close(() => r()));
  return state;
}

const USDT = { symbol: 'USDT', address: '0x1111111111111111111111111111111111111111', decimals: 6 };
const WBTC = { symbol: 'WBTC', address: '0x2222222222222222222222222222222222222222', decimals: 8 };

let chain: FakeEvm;
let btc: FakeBitcoinCore;
let rates: FakeRates;
/** payments.rates provider "http" against the fake price API. */
let viaHttp: TestService;
/** payments.rates provider "static": the config's table and the store's. */
let viaStatic: TestService;
let mh: Merchant;
let ms: Merchant;
/** What the HTTP-rates service logged. */
const logged: string[] = [];

beforeAll(async () => {
  [chain, btc, rates] = await Promise.all([startFakeEvmChain(), new FakeBitcoinCore().start(), startFakeRates()]);
  chain.mine();
  const networks = [
    { slug: 'fake', name: 'Fake', family: 'evm' as const, environments: [{ slug: 'local', upstreams: [chain.url] }], tokens: [USDT, WBTC] },
    { slug: 'bitcoin', name: 'Bitcoin', family: 'utxo' as const, environments: [{ slug: 'regtest', upstreams: [btc.url] }] },
  ];
  [viaHttp, viaStatic] = await Promise.all([
    startTestService({
      networks,
      payments: {
        rates: {
          provider: 'http', ttl_s: 60,
          http: { url: rates.url, selector: 'data.{asset}.{currency}', time_selector: 'ts', headers_env: 'TEST_RATE_HEADERS', timeout_ms: 2000 },
        },
      },
    }, { env: { TEST_RATE_HEADERS: json({ 'x-api-key': HEADER_SECRET }) }, log: (line) => logged.push(line) }),
    startTestService({ networks, payments: { rates: { provider: 'static', ttl_s: 300, static: { 'ETH/USD': '2500', 'USDT/EUR': '0.92' } } } }),
  ]);
  [mh, ms] = await Promise.all([viaHttp.merchant(), viaStatic.merchant()]);
  for (const m of [mh, ms]) expect((await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }))).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await Promise.all([viaHttp?.stop(), viaStatic?.stop()]);
  await Promise.all([chain?.close(), btc?.stop(), rates?.close()]);
});

const create = (m: Merchant, body: Record<string, unknown>) => m.call('POST', '/v1/payments', json({ network_slug: 'fake', ...body }));

describe('fiat prices: conversion arithmetic', () => {
  it('rounds up to the base unit, exactly, and spells exponent numbers out', () => {
    expect(priceToBaseUnits('10.00', '0.9998', 6)).toBe(10_002_001n); // 10.0020004... USDT
    expect(priceToBaseUnits('3000', '3000', 18)).toBe(10n ** 18n); // exact: no rounding
    expect(priceToBaseUnits('1', '3', 18)).toBe(333_333_333_333_333_334n);
    expect(numberToDecimal(1.5e-7)).toBe('0.00000015');
    expect(numberToDecimal(1e21)).toBe('1000000000000000000000');
    expect(numberToDecimal(3000.5)).toBe('3000.5');
  });
});

describe('fiat prices: configuration', () => {
  it('payments.rates is checked: pairs, rates as decimal strings, http needs its block', () => {
    expect(parseConfig({}).payments.rates).toEqual({ provider: 'static', ttl_s: 300, static: {} });
    expect(() => parseConfig({ payments: { rates: { static: { 'eth/usd': '1' } } } })).toThrow(/keys are ASSET\/CURRENCY/);
    expect(() => parseConfig({ payments: { rates: { static: { 'ETH/USD': 3000 } } } })).toThrow(/positive decimal string/);
    expect(() => parseConfig({ payments: { rates: { static: { 'ETH/USD': '0.00' } } } })).toThrow(/positive decimal string/);
    expect(() => parseConfig({ payments: { rates: { provider: 'http' } } })).toThrow(/provider "http" needs payments.rates.http/);
  });

  it('an http source is an http(s) URL, and its sanity band has documented defaults and checks', () => {
    const http = (extra: Record<string, unknown>) => parseConfig({ payments: { rates: { provider: 'http', http: { url: 'https://prices.example/{asset}', selector: 'p', ...extra } } } });
    for (const url of ['file:///etc/passwd', 'data:application/json,{"p":1}', 'ftp://prices.example/x']) {
      expect(() => http({ url }), url).toThrow(/payments\.rates\.http\.url.*must be an http\(s\) URL/s);
    }
    expect(http({}).payments.rates.http).toMatchObject({ min_rate: '0.000000001', max_rate: '1000000000000', max_move: 0.5, max_move_window_s: 3600 });
    expect(() => http({ min_rate: '10', max_rate: '1' })).toThrow(/min_rate must be below max_rate/);
    expect(() => http({ min_rate: 1e-30 })).toThrow(/positive decimal string/);
    expect(() => http({ max_move: 0 })).toThrow(/max_move/);
  });

  it('a rate outside the band, or moved more than max_move within the window, is not believed', () => {
    const checks = { min_rate: '0.000000001', max_rate: '1000000000000', max_move: 0.5, max_move_window_s: 3600 };
    const now = 1_000_000_000;
    expect(implausibleRate(numberToDecimal(1e-30), undefined, checks, now)).toMatch(/outside min_rate/);
    expect(implausibleRate('10000000000000', undefined, checks, now)).toMatch(/outside min_rate/);
    expect(implausibleRate('0.000000001', undefined, checks, now)).toBeUndefined();
    expect(implausibleRate('3000', undefined, checks, now)).toBeUndefined();
    const last = { rate: '3000', atMs: now - 60_000 };
    expect(implausibleRate('4500', last, checks, now)).toBeUndefined(); // 1.5x: the edge
    expect(implausibleRate('2000', last, checks, now)).toBeUndefined(); // 1/1.5
    expect(implausibleRate('4501', last, checks, now)).toMatch(/moved more than max_move 0.5 from 3000/);
    expect(implausibleRate('30', last, checks, now)).toMatch(/moved more than max_move/);
    // An old last rate does not hold a real move back for ever.
    expect(implausibleRate('30', { rate: '3000', atMs: now - 3_601_000 }, checks, now)).toBeUndefined();
  });

  it('a header value with CR/LF, or a header name that is no token, stops serve at start', async () => {
    for (const [headers, why] of [
      [{ 'x-api-key': `${HEADER_SECRET}\r\nx-injected: 1` }, /header value with a control character/],
      [{ 'x-api-key\r\nx-injected': HEADER_SECRET }, /header name that is not a token/],
    ] as const) {
      const started = startTestService({
        networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }] }],
        payments: { rates: { provider: 'http', http: { url: rates.url, selector: 'data.{asset}.{currency}', headers_env: 'TEST_CRLF_HEADERS' } } },
      }, { env: { TEST_CRLF_HEADERS: json(headers) } });
      const err = await started.then(async (t) => { await t.stop(); return undefined; }, (e: Error) => e);
      expect(err?.message).toMatch(why);
      expect(err?.message).toContain('TEST_CRLF_HEADERS');
      expect(err?.message).not.toContain(HEADER_SECRET);
    }
  });

  it('a headers variable that is not a JSON object stops serve at start, naming the variable and not its value', async () => {
    const started = startTestService({
      networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }] }],
      payments: { rates: { provider: 'http', http: { url: rates.url, selector: 'data.{asset}.{currency}', headers_env: 'TEST_BAD_HEADERS' } } },
    }, { env: { TEST_BAD_HEADERS: `x-api-key: ${HEADER_SECRET}` } });
    const err = await started.then(async (t) => { await t.stop(); return undefined; }, (e: Error) => e);
    expect(err?.message).toMatch(/TEST_BAD_HEADERS must hold a JSON object/);
    expect(err?.message).not.toContain(HEADER_SECRET);
  });
});

describe('fiat prices from an HTTP source', () => {
  it('locks the rate at creation: the source changing later changes neither the order nor its retry', async () => {
    rates.prices = { ETH: { USD: 3000.5 } };
    const body = { order_id: 'lock-1', price_amount: '100', price_currency: 'USD' };
    const r = await create(mh, body);
    expect(r.status, json(r.body)).toBe(200);
    const p = r.body.payment;
    // ceil(100 / 3000.5 ETH) in wei.
    expect(p).toMatchObject({
      price_amount: '100', price_currency: 'USD', rate: '3000.5', rate_source: 'http',
      amount_raw: '33327778703549409', amount: '0.033327778703549409', asset_symbol: 'ETH', decimals: 18,
    });
    expect(Date.now() - Date.parse(p.rate_at)).toBeLessThan(60_000);
    // The operator's key header went to the source.
    expect(rates.requests.at(-1)?.['x-api-key']).toBe(HEADER_SECRET);

    rates.prices = { ETH: { USD: 4000 } };
    const again = await create(mh, { ...body, price_amount: '100.00' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, payment: { payment_id: p.payment_id, amount_raw: p.amount_raw, rate: '3000.5' } });
    expect((await mh.call('GET', `/v1/payments/${p.payment_id}`)).body.payment).toMatchObject({ rate: '3000.5', amount_raw: p.amount_raw, rate_at: p.rate_at });
    // The same order_id with another price is another body.
    const other = await create(mh, { ...body, price_amount: '101' });
    expect(other.status).toBe(409);
  });

  it('exact base units for 6-, 8- and 18-decimal assets, rounded up', async () => {
    rates.prices = { USDT: { USD: '0.9998' }, WBTC: { USD: 97123.45 }, BTC: { USD: '97123.45' }, ETH: { EUR: '2800' } };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ order_id: 'dec-6', asset: 'USDT', price_amount: '10.00', price_currency: 'USD' }, '10002001', '10.002001'],
      [{ order_id: 'dec-8', asset: 'WBTC', price_amount: '50', price_currency: 'USD' }, '51481', '0.00051481'],
      [{ order_id: 'dec-8-btc', network_slug: 'bitcoin', address: regtestAddress('wpkh'), price_amount: '50', price_currency: 'USD' }, '51481', '0.00051481'],
      // 1/2800 ETH = 0.000357142857142857142857...: the 18th decimal rounds up.
      [{ order_id: 'dec-18', price_amount: '1', price_currency: 'EUR' }, '357142857142858', '0.000357142857142858'],
    ];
    for (const [body, raw, units] of cases) {
      const r = await create(mh, body);
      expect(r.status, json(r.body)).toBe(200);
      expect(r.body.payment, json(body)).toMatchObject({ amount_raw: raw, amount: units, rate_source: 'http', price_currency: body.price_currency });
    }
  });

  it('a rate the source priced longer ago than ttl_s is refused (400, the exact message)', async () => {
    rates.prices = { ETH: { GBP: 2400 } };
    rates.ts = Date.now() / 1000 - 3600;
    try {
      const r = await create(mh, { order_id: 'stale-1', price_amount: '10', price_currency: 'GBP' });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Rate unavailable for ETH/GBP.');
    } finally {
      rates.ts = undefined;
    }
    // Fresh again: the same request goes through (a refusal is not cached).
    const ok = await create(mh, { order_id: 'stale-1', price_amount: '10', price_currency: 'GBP' });
    expect(ok.status, json(ok.body)).toBe(200);
    expect(ok.body.payment.rate).toBe('2400');
  });

  it('a source time ahead of ours is not fresh: milliseconds read as seconds (year ~55000), or out of Date\'s range, are refused, not a 500', async () => {
    rates.prices = { ETH: { CHF: 2300 } };
    try {
      for (const [i, ts] of [Date.now(), 1e300].entries()) {
        rates.ts = ts;
        const r = await create(mh, { order_id: `future-${i}`, price_amount: '10', price_currency: 'CHF' });
        expect(r.status, json(r.body)).toBe(400);
        expect(r.body.error).toBe('Rate unavailable for ETH/CHF.');
      }
    } finally {
      rates.ts = undefined;
    }
  });

  it('a rate of 1e-30 is no rate: refused (no order for 10^31 ETH), the reason logged; a plausible one after it goes through', async () => {
    rates.prices = { ETH: { PLN: 1e-30 } };
    const r = await create(mh, { order_id: 'tiny-1', price_amount: '10', price_currency: 'PLN' });
    expect(r.status, json(r.body)).toBe(400);
    expect(r.body.error).toBe('Rate unavailable for ETH/PLN.');
    expect(logged).toContainEqual(expect.stringMatching(/^payments: rate ETH\/PLN unavailable: the source's rate 0\.0{29}1 is outside min_rate 0\.000000001 \.\. max_rate 1000000000000$/));
    // A refusal is not cached and not remembered as the pair's last rate.
    rates.prices = { ETH: { PLN: 12000 } };
    const ok = await create(mh, { order_id: 'tiny-1', price_amount: '10', price_currency: 'PLN' });
    expect(ok.status, json(ok.body)).toBe(200);
    expect(ok.body.payment.rate).toBe('12000');
  });

  it('a rate that moved more than max_move since the pair\'s last one is refused, the reason logged', async () => {
    // Its own service: a one-second cache, so the next order asks the source again.
    const own: string[] = [];
    const t = await startTestService({
      networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }] }],
      payments: { rates: { provider: 'http', ttl_s: 1, http: { url: rates.url, selector: 'data.{asset}.{currency}', headers_env: 'TEST_RATE_HEADERS', max_move: 0.5 } } },
    }, { env: { TEST_RATE_HEADERS: json({ 'x-api-key': HEADER_SECRET }) }, log: (line) => own.push(line) });
    try {
      const m = await t.merchant();
      expect((await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }))).status).toBe(200);
      rates.prices = { ETH: { DKK: 20000 } };
      expect((await create(m, { order_id: 'move-0', price_amount: '10', price_currency: 'DKK' })).body.payment.rate).toBe('20000');
      rates.prices = { ETH: { DKK: 200000 } };
      let n = 0;
      // Orders go on at the cached rate until the cache runs out; then the tenfold rate is refused.
      await vi.waitFor(async () => {
        const r = await create(m, { order_id: `move-${++n}`, price_amount: '10', price_currency: 'DKK' });
        if (r.status === 200) expect(r.body.payment.rate).toBe('20000');
        expect(r.body.error).toBe('Rate unavailable for ETH/DKK.');
      }, { timeout: 15_000, interval: 200 });
      expect(own).toContainEqual(expect.stringMatching(/^payments: rate ETH\/DKK unavailable: the source's rate 200000 moved more than max_move 0\.5 from 20000 \(accepted \d+ s ago\)$/));
      rates.prices = { ETH: { DKK: 25000 } };
      expect((await create(m, { order_id: 'move-last', price_amount: '10', price_currency: 'DKK' })).body.payment.rate).toBe('25000');
    } finally {
      await t.stop();
    }
  }, 60_000);

  it('the source down, or without the pair, refuses creation', async () => {
    rates.prices = { ETH: { JPY: 450000 } };
    rates.down = true;
    try {
      const r = await create(mh, { order_id: 'down-1', price_amount: '1000', price_currency: 'JPY' });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Rate unavailable for ETH/JPY.');
    } finally {
      rates.down = false;
    }
    // The operator learns why from the log, which names the source's origin, never its headers.
    expect(logged).toContainEqual(expect.stringMatching(/^payments: rate ETH\/JPY unavailable: GET http:\/\/127\.0\.0\.1:\d+: HTTP 503$/));
    expect(logged.filter((l) => l.includes(HEADER_SECRET))).toEqual([]);
    // An answer too large to be a price is not read to its end.
    rates.prices = { ETH: { JPY: 450000, NOK: 33000 } };
    rates.pad = 1024 * 1024;
    try {
      expect((await create(mh, { order_id: 'down-3', price_amount: '1', price_currency: 'NOK' })).body.error).toBe('Rate unavailable for ETH/NOK.');
    } finally {
      rates.pad = 0;
    }
    expect(logged).toContainEqual(expect.stringMatching(/ETH\/NOK unavailable: .*answer larger than 1048576 bytes/));
    const missing = await create(mh, { order_id: 'down-2', price_amount: '1', price_currency: 'CHF' });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('Rate unavailable for ETH/CHF.');
    expect((await create(mh, { order_id: 'down-1', price_amount: '1000', price_currency: 'JPY' })).body.payment).toMatchObject({ rate: '450000', amount_raw: String(10n ** 18n * 1000n / 450000n + 1n) });
  });
});

describe('fiat prices from the static table', () => {
  it('config rates, then the store\'s through `rpcctl admin rates set`, which a stale age refuses', async () => {
    const fromConfig = await create(ms, { order_id: 'st-1', price_amount: '25', price_currency: 'USD' });
    expect(fromConfig.status, json(fromConfig.body)).toBe(200);
    expect(fromConfig.body.payment).toMatchObject({ rate: '2500', rate_source: 'static', amount_raw: '10000000000000000', price_amount: '25' });

    const set = await cli(['admin', 'rates', 'set', 'eth', 'usd', '2600.5', '--data-dir', viaStatic.dataDir, '--json']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ asset: 'ETH', currency: 'USD', rate: '2600.5' });
    const fromStore = await create(ms, { order_id: 'st-2', price_amount: '25', price_currency: 'USD' });
    expect(fromStore.body.payment).toMatchObject({ rate: '2600.5', rate_source: 'static', amount_raw: '9613535858488753' });
    const listed = await cli(['admin', 'rates', 'list', '--data-dir', viaStatic.dataDir, '--json']);
    expect(JSON.parse(listed.stdout).rates).toEqual([
      { pair: 'ETH/USD', rate: '2600.5', source: 'store', updated_at: expect.any(String), fresh: true },
      { pair: 'USDT/EUR', rate: '0.92', source: 'config', updated_at: null, fresh: true },
    ]);
    const bad = await cli(['admin', 'rates', 'set', 'ETH', 'USD', '-3', '--data-dir', viaStatic.dataDir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/positive decimal/);

    // The feed stopped: older than ttl_s, the pair is refused, the config's 2500 notwithstanding.
    await viaStatic.store.db.updateTable('payment_rates').set({ updated_at: new Date(Date.now() - 301_000).toISOString() })
      .where('asset', '=', 'ETH').where('currency', '=', 'USD').execute();
    const stale = await create(ms, { order_id: 'st-3', price_amount: '25', price_currency: 'USD' });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe('Rate unavailable for ETH/USD.');
    expect((await create(ms, { order_id: 'st-4', price_amount: '1', price_currency: 'SEK' })).body.error).toBe('Rate unavailable for ETH/SEK.');
    // A token's pair is its symbol's.
    expect((await create(ms, { order_id: 'st-5', asset: 'USDT', price_amount: '19.99', price_currency: 'EUR' })).body.payment)
      .toMatchObject({ amount_raw: '21728261', rate: '0.92' });
  });

  it('asset-priced orders carry null fiat fields', async () => {
    const r = await create(ms, { order_id: 'plain-1', amount: '0.5' });
    expect(r.body.payment).toMatchObject({ amount: '0.5', price_amount: null, price_currency: null, rate: null, rate_source: null, rate_at: null });
  });

  it('validation names the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ amount: '1', price_amount: '1', price_currency: 'USD' }, /^price_amount: give either amount .* not both/],
      [{}, /^amount: is required/],
      [{ price_amount: '1' }, /^price_currency: is required/],
      [{ price_currency: 'USD' }, /^price_amount: is required/],
      [{ price_amount: '1', price_currency: 'usd' }, /^price_currency: must be an ISO 4217/],
      [{ price_amount: '1', price_currency: 'USX' }, /^price_currency: must be an ISO 4217/],
      [{ price_amount: '1', price_currency: 'EURO' }, /^price_currency: must be an ISO 4217/],
      [{ price_amount: '1e3', price_currency: 'USD' }, /^price_amount: must be a decimal string/],
      [{ price_amount: '-5', price_currency: 'USD' }, /^price_amount: must be a decimal string/],
      [{ price_amount: '0.00', price_currency: 'USD' }, /^price_amount: must be greater than 0/],
      [{ price_amount: 19.99, price_currency: 'USD' }, /price_amount.*decimal string/],
    ];
    for (const [body, msg] of cases) {
      const r = await create(ms, { order_id: 'v', ...body });
      expect(r.status, json(body)).toBe(400);
      expect(r.body.error, json(body)).toMatch(msg);
    }
  });

  it('rpcctl payments create --price --currency shows the price and the rate', async () => {
    const env = { PUBLIC_API_KEY: ms.apiKey, PUBLIC_API_SECRET: ms.secret, PUBLIC_API_BASE: viaStatic.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir() };
    const made = await cli(['payments', 'create', '--order-id', 'cli-fiat', '--network', 'fake', '--asset', 'USDT', '--price', '9.20', '--currency', 'EUR'], { env });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toMatch(/pay 10 USDT .*\n.*Priced 9.2 EUR at 0.92 EUR\/USDT \(static, /);
    const shown = await cli(['payments', 'get', made.stdout.trim()], { env });
    expect(shown.stdout).toMatch(/^price\t9.2 EUR$/m);
    expect(shown.stdout).toMatch(/^rate\t0.92 EUR\/USDT \(static, /m);
    const both = await cli(['payments', 'create', '--order-id', 'x', '--network', 'fake', '--amount', '1', '--price', '1', '--currency', 'EUR'], { env });
    expect(both.code).toBe(2);
    const lone = await cli(['payments', 'create', '--order-id', 'x', '--network', 'fake', '--price', '1'], { env });
    expect(lone.code).toBe(2);
  });
});
