import { getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { parseEvmAddress, toChecksumAddress } from '../src/chains/evm/address.js';
import { parseStellarAddress } from '../src/chains/stellar/address.js';
import { matchEvmBlock, TRANSFER_TOPIC, valueHitTxs, withReverted, type EvmLog, type EvmTx } from '../src/chains/evm/match.js';
import { WatchRegistry } from '../src/watch/registry.js';
import { blockedReason } from '../src/webhooks/ssrf.js';
import { mergeFilters, DEFAULT_FILTERS } from '../src/webhooks/filters.js';
import { RETRY_SCHEDULE_MS, retryDelayMs } from '../src/webhooks/schedule.js';

describe('addresses', () => {
  it('EIP-55 checksums agree with viem (an independent implementation)', () => {
    for (let i = 0; i < 50; i++) {
      const hex = `0x${Buffer.from(Array.from({ length: 20 }, (_, j) => (i * 37 + j * 101) & 0xff)).toString('hex')}`;
      expect(toChecksumAddress(hex)).toBe(getAddress(hex));
    }
    // The EIP's own examples.
    for (const a of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb']) {
      expect(parseEvmAddress(a.toLowerCase()).display).toBe(a);
      expect(parseEvmAddress(a)).toEqual({ display: a, key: a.toLowerCase() });
    }
  });

  it('rejects malformed EVM addresses and wrong checksums', () => {
    expect(() => parseEvmAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toThrow(/EIP-55/);
    for (const bad of ['', '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe', '0xZZAeb6053F3E94C9b9A09f33669435E7Ef1BeAed']) {
      expect(() => parseEvmAddress(bad)).toThrow(/20-byte hex/);
    }
  });

  it('Stellar StrKey account ids: version byte and CRC16', () => {
    const ok = 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H';
    expect(parseStellarAddress(ok).display).toBe(ok);
    expect(() => parseStellarAddress(`${ok.slice(0, 10)}A${ok.slice(11)}`)).toThrow(/checksum/);
    // A valid StrKey of another kind (a secret seed, S...) is not an account id.
    expect(() => parseStellarAddress('SBZVMB74Z76QZ3ZOY7UTDFYKMEGKW5XFJEB6PFKBF4UYSSWHG4EDH7PY')).toThrow(/Stellar account id/);
  });
});

describe('matching', () => {
  const reg = new WatchRegistry();
  const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
  let id = 0;
  const watch = (envId: number, accountId: number, address: string) => reg.add({
    id: ++id, watch_id: `w_${id}`, account_id: accountId, network_environment_id: envId, network_slug: 'eth',
    address: toChecksumAddress(address), address_key: address.toLowerCase(), created_at: '', start_height: 0,
  });
  watch(1, 1, addr(1));
  watch(1, 2, addr(1)); // a second account watching the same address
  watch(1, 1, addr(2));
  watch(2, 1, addr(3)); // another environment

  const tx = (hash: string, from: string, to: string | null, value: bigint): EvmTx => ({ hash, from, to, value: `0x${value.toString(16)}` });
  const transfer = (txHash: string, token: string, from: string, to: string, amount: bigint, logIndex: number): EvmLog => ({
    address: token, transactionHash: txHash, logIndex: `0x${logIndex.toString(16)}`, data: `0x${amount.toString(16).padStart(64, '0')}`,
    topics: [TRANSFER_TOPIC, `0x${from.slice(2).padStart(64, '0')}`, `0x${to.slice(2).padStart(64, '0')}`],
  });

  it('classifies payments, payouts and other hits; one event per watch', () => {
    const token = addr(0xabc);
    const hits = matchEvmBlock(reg, 1, [
      tx('0xa', addr(9), addr(1), 5n), // native in to a doubly watched address
      tx('0xb', addr(2), addr(1), 7n), // both sides watched
      tx('0xc', addr(9), token, 0n), // token transfer 9 -> 2
      tx('0xd', addr(2), token, 0n), // call from 2 moving nothing of 2's: other
      tx('0xe', addr(3), addr(9), 1n), // addr(3) is watched on env 2 only
    ], [transfer('0xc', token, addr(9), addr(2), 1000n, 4)]);
    expect(hits.map((h) => [h.txHash, h.watch.watchId, h.type, h.direction, h.token, h.amount, h.logIndex])).toEqual([
      ['0xa', 'w_1', 'payment', 'in', null, '5', null],
      ['0xa', 'w_2', 'payment', 'in', null, '5', null],
      ['0xb', 'w_3', 'payout', 'out', null, '7', null],
      ['0xb', 'w_1', 'payment', 'in', null, '7', null],
      ['0xb', 'w_2', 'payment', 'in', null, '7', null],
      ['0xc', 'w_3', 'payment', 'in', toChecksumAddress(token), '1000', 4],
      ['0xd', 'w_3', 'other', 'out', null, '0', null],
    ]);
  });

  it('receipts are asked for native value hits only; a reverted one becomes `other` on the same side', () => {
    const token = addr(0xabc);
    const hits = matchEvmBlock(reg, 1, [
      tx('0xAA', addr(2), addr(1), 5n), // value, both sides watched: reverted
      tx('0xbb', addr(9), addr(2), 6n), // value: succeeded
      tx('0xcc', addr(9), token, 0n), // token transfer: no receipt needed
      tx('0xdd', addr(2), token, 0n), // other already
    ], [transfer('0xcc', token, addr(9), addr(2), 1000n, 0)]);
    expect(valueHitTxs(hits)).toEqual(['0xAA', '0xbb']);
    const after = withReverted(hits, new Set(['0xaa']));
    expect(after.map((h) => [h.txHash, h.watch.watchId, h.type, h.direction, h.amount])).toEqual([
      ['0xAA', 'w_3', 'other', 'out', '0'],
      ['0xAA', 'w_1', 'other', 'in', '0'],
      ['0xAA', 'w_2', 'other', 'in', '0'],
      ['0xbb', 'w_3', 'payment', 'in', '6'],
      ['0xcc', 'w_3', 'payment', 'in', '1000'],
      ['0xdd', 'w_3', 'other', 'out', '0'],
    ]);
    expect(withReverted(hits, new Set())).toEqual(hits);
  });

  it('ignores ERC-721 transfers (four topics) and unwatched addresses; removal takes effect', () => {
    const nft = { ...transfer('0xf', addr(7), addr(9), addr(1), 1n, 0), topics: [TRANSFER_TOPIC, `0x${'0'.repeat(24)}${addr(9).slice(2)}`, `0x${'0'.repeat(24)}${addr(1).slice(2)}`, '0x01'] };
    expect(matchEvmBlock(reg, 1, [tx('0xf', addr(9), addr(7), 0n)], [nft])).toEqual([]);
    const r = new WatchRegistry();
    const row = { id: 1, watch_id: 'w_x', account_id: 1, network_environment_id: 1, network_slug: 'eth', address: addr(5), address_key: addr(5), created_at: '', start_height: 0 };
    r.add(row);
    expect(matchEvmBlock(r, 1, [tx('0x1', addr(9), addr(5), 1n)], [])).toHaveLength(1);
    r.remove(row);
    expect(matchEvmBlock(r, 1, [tx('0x1', addr(9), addr(5), 1n)], [])).toEqual([]);
    expect(r.watchedEnvIds()).toEqual([]);
  });
});

describe('SSRF rules', () => {
  it.each([
    ['127.0.0.1', false, 'loopback'], ['10.0.0.5', false, 'loopback'], ['172.20.1.1', false, 'private'], ['192.168.0.1', false, 'private'],
    ['169.254.10.10', false, 'link-local'], ['::1', false, 'loopback'], ['fe80::1', false, 'link-local'], ['fd12::1', false, 'private'],
    ['::ffff:127.0.0.1', false, 'loopback'], ['::ffff:7f00:1', false, 'loopback'], ['100.64.0.1', false, 'private'],
    ['169.254.169.254', true, 'metadata'], ['fd00:ec2::254', true, 'metadata'], ['0.0.0.0', true, 'routable'], ['224.0.0.1', true, 'routable'],
  ])('%s is refused (allow_private=%s)', (ip, allowPrivate, word) => {
    expect(blockedReason(ip, allowPrivate)).toContain(word);
  });
  // IPv6 forms that carry an IPv4 address the packet ends up at: judged as that address.
  it.each([
    ['::7f00:1', 'loopback', 'IPv4-compatible'], ['::127.0.0.1', 'loopback', 'IPv4-compatible'],
    ['::a00:5', 'private', 'IPv4-compatible'], ['::ffff:0:7f00:1', 'loopback', 'SIIT'], ['::ffff:0:10.0.0.5', 'private', 'SIIT'],
    ['64:ff9b::7f00:1', 'loopback', 'NAT64'], ['64:ff9b::10.1.2.3', 'private', 'NAT64'],
    ['2002:7f00:1::', 'loopback', '6to4'], ['2002:c0a8:101::1', 'private', '6to4'],
  ])('%s is refused unless private URLs are allowed (%s, %s)', (ip, word) => {
    expect(blockedReason(ip, false)).toContain(word);
    expect(blockedReason(ip, true)).toBeUndefined();
  });
  it.each([
    ['::a9fe:a9fe', 'metadata'], ['::169.254.169.254', 'metadata'], ['::ffff:0:a9fe:a9fe', 'metadata'], ['::ffff:a9fe:a9fe', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata'], ['64:ff9b::100.100.100.200', 'metadata'], ['2002:a9fe:a9fe::1', 'metadata'],
    ['::e000:1', 'routable'], ['64:ff9b::', 'routable'], ['2002:e000:1::', 'routable'], ['2002::', 'routable'],
  ])('%s is always refused (%s)', (ip, word) => {
    expect(blockedReason(ip, false)).toContain(word);
    expect(blockedReason(ip, true)).toContain(word);
  });
  it('6to4 of a public IPv4 passes; NAT64 stays internal; :: and ::1 keep their IPv6 meaning', () => {
    expect(blockedReason('2002:5db8:d822::1', false)).toBeUndefined();
    expect(blockedReason('64:ff9b::5db8:d822', false)).toContain('private');
    expect(blockedReason('64:ff9b::5db8:d822', true)).toBeUndefined();
    expect(blockedReason('::1', true)).toBeUndefined();
    expect(blockedReason('::', true)).toContain('routable');
  });
  it('public addresses pass; private ones pass when allowed', () => {
    expect(blockedReason('93.184.216.34', false)).toBeUndefined();
    expect(blockedReason('2606:2800:220:1::1', false)).toBeUndefined();
    expect(blockedReason('127.0.0.1', true)).toBeUndefined();
    expect(blockedReason('10.1.1.1', true)).toBeUndefined();
  });
});

describe('retry schedule and filters', () => {
  it('10 s, 1 m, 5 m, 30 m, 2 h, 6 h, 12 h, 24 h with ±20 % jitter, then give up', () => {
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([10, 60, 300, 1800, 7200, 21600, 43200, 86400]);
    for (let a = 1; a <= 8; a++) {
      expect(retryDelayMs(a, RETRY_SCHEDULE_MS, () => 0)).toBe(Math.round(RETRY_SCHEDULE_MS[a - 1]! * 0.8));
      expect(retryDelayMs(a, RETRY_SCHEDULE_MS, () => 0.999999)).toBeLessThanOrEqual(RETRY_SCHEDULE_MS[a - 1]! * 1.2);
    }
    expect(retryDelayMs(9)).toBeUndefined();
  });
  it('a PUT replaces the filter keys it names', () => {
    expect(mergeFilters(DEFAULT_FILTERS, { block: false, payment_networks: ['eth'] })).toEqual({ ...DEFAULT_FILTERS, block: false, payment_networks: ['eth'] });
  });
});
