import { describe, expect, it } from 'vitest';
import { allTraits } from './traits.js';
import { stellarTraits } from './stellar/traits.js';
import { tronTraits } from './tron/traits.js';
import { utxoTraits } from './utxo/traits.js';

describe('gateway traits', () => {
  it('every family probes a per-upstream head', () => {
    for (const t of allTraits()) {
      expect(t.gateway.probe.request.method, t.name).toMatch(/^(GET|POST)$/);
      expect(typeof t.gateway.methods.classOf('x', []).retry, t.name).toBe('boolean');
    }
  });

  it('Horizon root: the latest ledger it ingested is its head', () => {
    const text = JSON.stringify({ horizon_version: '2.30', core_version: 'v20', history_latest_ledger: 512 });
    expect(stellarTraits.gateway.probe.read(200, text)).toEqual({ version: '2.30', head: 512 });
    expect(() => stellarTraits.gateway.probe.read(503, text)).toThrow();
  });

  it('Tron getnowblock: the block number is its head', () => {
    expect(tronTraits.gateway.probe.read(200, '{"block_header":{"raw_data":{"number":77}}}')).toEqual({ version: null, head: 77 });
    expect(tronTraits.gateway.probe.read(200, '{}').head).toBeUndefined();
  });

  it('Bitcoin Core: getblockcount is its head, and a sent transaction is never hedged', () => {
    const text = JSON.stringify([{ id: 1, result: { subversion: '/Satoshi:27.0.0/' } }, { id: 2, result: 840000 }]);
    expect(utxoTraits.gateway.probe.read(200, text)).toEqual({ version: '/Satoshi:27.0.0/', head: 840000 });
    expect(() => utxoTraits.gateway.probe.read(200, '{"result":1}')).toThrow();
    expect(utxoTraits.gateway.methods.classOf('sendrawtransaction', ['00']).idempotent).toBe(false);
    expect(utxoTraits.gateway.methods.classOf('getblock', ['00']).needsHead).toBe(false);
    expect(utxoTraits.gateway.methods.classOf('getblockcount', []).needsHead).toBe(true);
  });
});
