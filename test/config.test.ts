import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../src/config/index.js';
import { applyOverrides } from '../src/serve/overrides.js';

const dir = mkdtempSync(join(tmpdir(), 'rpcctl-config-'));

describe('config', () => {
  it('built-in defaults give a working catalog with a free plan without watch slots', () => {
    const c = loadConfig(undefined);
    expect(c.api.port).toBe(8080);
    expect(c.gateway).toMatchObject({ port: 8545, host_prefix: 'rpc', rpc_domain: 'localhost:8545', scheme: 'http' });
    expect(c.limits).toEqual({ api_rps_per_ip: 30, api_rpm_per_account: 100, webhook_tests_per_minute: 10 });
    expect(c.retention).toEqual({ events_days: 90, deliveries_days: 30, audit_days: 365, batch_size: 500, interval_ms: 60_000 });
    expect(c.gateway).toMatchObject({ usage_flush_ms: 250, body_timeout_ms: 10_000, max_inflight_bytes_per_ip: 8 * 1024 * 1024, max_inflight_bytes: 64 * 1024 * 1024 });
    expect(c.api).toMatchObject({ body_timeout_ms: 10_000, max_inflight_bytes_per_ip: 8 * 1024 * 1024, max_inflight_bytes: 64 * 1024 * 1024 });
    expect(c.networks.map((n) => n.slug)).toContain('eth');
    expect(c.plans.find((p) => p.slug === 'free')!.webhook_address_slots).toBe(0);
    expect(c.webhooks).toEqual({ egress_ips: [], timeout_ms: 5000, allow_private_urls: false });
  });

  it('reads the minimal JSON shape of decisions.md and fills defaults', () => {
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({
      api: { host: '127.0.0.1', port: 8080 },
      gateway: { host: '127.0.0.1', port: 8545, host_prefix: 'rpc', rpc_domain: 'localhost:8545', scheme: 'http' },
      limits: { api_rps_per_ip: 30, api_rpm_per_account: 100 },
      networks: [{ slug: 'eth', name: 'Ethereum', family: 'evm', sort: 10,
        environments: [{ id: 1, slug: 'mainnet', upstreams: ['http://127.0.0.1:18545'] }],
        credits: { default: 20, methods: { eth_blockNumber: 10, eth_call: 26 } } }],
      plans: [{ id: 1, slug: 'free', name: 'Free', included_credits: 100000, rps_limit: 5, endpoints_limit: 1,
        webhook_address_slots: 0, network_limit: 1, allowed_network_slugs: [] }],
    }));
    const c = loadConfig(file);
    expect(c.networks[0]!.environments[0]!.confirmations).toBe(1);
    expect(c.gateway.max_body_bytes).toBe(1024 * 1024);
    // Sections given in part get the rest of their defaults.
    expect(c.gateway.usage_flush_ms).toBe(250);
    expect(c.api.body_timeout_ms).toBe(10_000);
    expect(c.plans).toHaveLength(1);
  });

  it('gives an EVM network without a credits table the built-in one', () => {
    const c = parseConfig({ networks: [
      { slug: 'a', name: 'A', environments: [{ slug: 'main' }] },
      { slug: 'b', name: 'B', environments: [{ slug: 'main' }], credits: { default: 7 } },
      { slug: 'x', name: 'X', family: 'stellar', environments: [{ slug: 'main' }] },
    ] });
    expect(c.networks[0]!.credits.methods.eth_call).toBe(26);
    expect(c.networks[0]!.credits.methods.eth_getBlockByNumber).toBe(25);
    expect(c.networks[1]!.credits).toEqual({ default: 7, methods: {} });
    expect(c.networks[2]!.credits).toEqual({ default: 20, methods: {} });
  });

  it('reads YAML', () => {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'api:\n  port: 9999\nwebhooks:\n  allow_private_urls: true\n');
    const c = loadConfig(file);
    expect(c.api.port).toBe(9999);
    expect(c.webhooks.allow_private_urls).toBe(true);
  });

  it('serve --dev lets webhooks reach private addresses and the checkout page return to an http shop', () => {
    const c = parseConfig({});
    expect([c.webhooks.allow_private_urls, c.payments.checkout.allow_any_redirect]).toEqual([false, false]);
    const dev = applyOverrides(c, { dev: true });
    expect([dev.webhooks.allow_private_urls, dev.payments.checkout.allow_any_redirect]).toEqual([true, true]);
    expect(dev.payments.checkout.rpm_per_ip).toBe(120);
  });

  it('names an unknown key', () => {
    expect(() => parseConfig({ api: { port: 1, prot: 2 } })).toThrow(/unknown key api\.prot/);
    expect(() => parseConfig({ gatway: {} })).toThrow(/unknown key gatway/);
  });

  it('names a key of the wrong type', () => {
    expect(() => parseConfig({ gateway: { port: '8545' } })).toThrow(/gateway\.port/);
    // The gateway's calls wait this long for Redis at most: not a minute.
    expect(() => parseConfig({ redis: { decision_timeout_ms: 60_000 } })).toThrow(/redis\.decision_timeout_ms/);
    expect(parseConfig({ redis: { decision_timeout_ms: 5_000 } }).redis.decision_timeout_ms).toBe(5_000);
    expect(() => parseConfig({ networks: [{ slug: 'x', name: 'X', environments: [{ slug: 'main', upstreams: 'http://a' }] }] }))
      .toThrow(/networks\[0\]\.environments\[0\]\.upstreams/);
  });

  it('trusted proxies must be addresses; a range or a typo stops the start', () => {
    expect(() => parseConfig({ api: { trusted_proxies: ['10.0.0.0/8'] } })).toThrow(/api\.trusted_proxies\[0\]: must be an IPv4 or IPv6 address/);
    expect(() => parseConfig({ gateway: { trusted_proxies: ['127.0.0.1', 'lb.internal'] } })).toThrow(/gateway\.trusted_proxies\[1\]/);
    expect(parseConfig({ api: { trusted_proxies: ['::1', '10.1.2.3'] } }).api.trusted_proxies).toHaveLength(2);
  });

  it('rejects duplicates and plans naming unknown networks', () => {
    const env = [{ id: 1, slug: 'main', upstreams: [] }];
    expect(() => parseConfig({ networks: [{ slug: 'a', name: 'A', environments: env }, { slug: 'a', name: 'B', environments: [{ id: 2, slug: 'main' }] }] }))
      .toThrow(/networks\[1\]\.slug: duplicate/);
    expect(() => parseConfig({ plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1, rps_limit: 1, endpoints_limit: 1, allowed_network_slugs: ['nope'] }] }))
      .toThrow(/plans\[0\]\.allowed_network_slugs\[0\]: unknown network "nope"/);
  });

  it('tokens must be of their network family\'s form: TRC-20 by a checksummed T… contract, none on UTXO networks', () => {
    expect(loadConfig(undefined).networks.find((n) => n.slug === 'tron')!.tokens).toEqual([{ symbol: 'USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }]);
    const net = (family: string, tokens: unknown[]) => ({ networks: [{ slug: 'x', name: 'X', family, environments: [{ slug: 'mainnet' }], tokens }] });
    expect(() => parseConfig(net('tron', [{ symbol: 'USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }]))).not.toThrow();
    // One character off: the base58check checksum fails.
    expect(() => parseConfig(net('tron', [{ symbol: 'USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', decimals: 6 }]))).toThrow(/networks\[0\]\.tokens\[0\]\.address: has an invalid base58check checksum/);
    expect(() => parseConfig(net('tron', [{ symbol: 'USDT', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 }]))).toThrow(/networks\[0\]\.tokens\[0\]: a 0x address is not a token form of the tron family/);
    expect(() => parseConfig(net('evm', [{ symbol: 'USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }]))).toThrow(/a T… address is not a token form of the evm family/);
    expect(() => parseConfig(net('utxo', [{ symbol: 'USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }]))).toThrow(/utxo networks have no tokens/);
  });

  it('reports unreadable and malformed files as ConfigError', () => {
    expect(() => loadConfig(join(dir, 'missing.json'))).toThrow(ConfigError);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "api": ');
    expect(() => loadConfig(bad)).toThrow(/not valid JSON/);
  });
});
