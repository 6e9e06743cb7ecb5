import { HDKey } from '@scure/bip32';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainFamilies } from '../src/chains/index.js';
import { SKIPPED, type ChainAdapter, type ChainEnvironment, type ChainFamily, type FetchedBlock, type WatchLookup, type WatchRef } from '../src/chains/family.js';
import { startNode, type SimFamily, type SimNode } from './sim/nodes.js';

/**
 * What every chain family registered in `FAMILIES` (src/chains/index.ts) must do over a fake
 * node of its own (test/sim/nodes.ts `startNode`: EVM the suites' one fake, Stellar a Horizon,
 * Tron the fake Tron HTTP API, UTXO the fake Bitcoin Core, Solana a JSON-RPC node over the model): report its head, deliver a block with
 * the watched addresses' hits and the parent hash reorg detection checks, round-trip its
 * addresses, write a payment URI, and derive order addresses where it derives. The families
 * come from the registry, so a new family fails here until it brings a fake node.
 */

const ENV_ID = 1;
const families = chainFamilies();

/** A node's environment as the catalog would give it (the address prefixes where the family has them). */
function environmentOf(family: ChainFamily, node: SimNode): ChainEnvironment {
  const net = node.network(node.url, {}) as { slug: string; environments: Array<{ slug: string }> };
  const slug = net.environments[0]!.slug;
  const addressFormat = family.config.addressFormat?.(slug);
  return { slug, network: { slug: net.slug, family: family.name }, upstreams: [node.url], ...(addressFormat ? { addressFormat } : {}) };
}

function watching(keys: Record<string, string>): WatchLookup {
  const refs = new Map<string, WatchRef[]>(Object.entries(keys).map(([key, watchId]) => [key, [{ watchId, accountId: 1, network: 'conformance', address: key }]]));
  return { lookup: (envId, key) => (envId === ENV_ID ? refs.get(key) : undefined), size: (envId) => (envId === ENV_ID ? refs.size : 0) };
}

/** A block the test made: the fake nodes skip no heights unless told to. */
async function blockAt(chain: ChainAdapter, height: number, registry: WatchLookup, envId: number): Promise<FetchedBlock | undefined> {
  const block = await chain.block(height, registry, envId);
  if (block === SKIPPED) throw new Error(`height ${height} answered as skipped`);
  return block;
}

/** An account-level extended public key for `family` on `env`: a test network's (tpub) unless it is mainnet. */
function accountKey(family: ChainFamily, env: ChainEnvironment): string {
  const seed = new Uint8Array(32).fill(7);
  const mainnet = HDKey.fromMasterSeed(seed).derive("m/44'/0'/0'").publicExtendedKey;
  const test = HDKey.fromMasterSeed(seed, { private: 0x04358394, public: 0x043587cf }).derive("m/44'/1'/0'").publicExtendedKey;
  for (const key of [mainnet, test]) {
    try {
      family.payments.derivation!.deriver(key, env);
      return key;
    } catch { /* the other network's key */ }
  }
  throw new Error(`no test key derives on ${family.name}`);
}

describe('every registered chain family has a fake node', () => {
  it('startNode (test/sim/nodes.ts) starts one for each family in FAMILIES', async () => {
    const missing: string[] = [];
    for (const f of families) {
      const node = await startNode(f.name as SimFamily).catch(() => undefined);
      if (!node) missing.push(f.name);
      await node?.close();
    }
    expect(missing, 'families without a fake node: add one to test/sim/nodes.ts').toEqual([]);
  });
});

for (const family of families) {
  describe(`the ${family.name} family over its fake node`, () => {
    let node: SimNode;
    let env: ChainEnvironment;
    let chain: ChainAdapter;
    beforeAll(async () => {
      const started = await startNode(family.name as SimFamily);
      if (!started) throw new Error(`no fake node for the ${family.name} family: add one to test/sim/nodes.ts startNode`);
      node = started;
      env = environmentOf(family, node);
      chain = family.scanner([node.url], 5000);
    });
    afterAll(async () => {
      await chain?.close();
      await node?.close();
    });

    it('head: the node\'s latest block', async () => {
      expect(await chain.head()).toBe(node.chain.head);
      node.chain.mine([]);
      node.sync();
      expect(await chain.head()).toBe(node.chain.head);
    });

    it('a block with a payment to a watched address gives that watch a payment hit of the amount; its sender\'s watch a payout', async () => {
      const payer = node.address();
      const payee = node.address();
      const watched = watching({ [family.parseAddress(env, payee.given).key]: 'w-payee', [family.parseAddress(env, payer.given).key]: 'w-payer' });
      const block = node.chain.mine([{ hash: node.chain.id('tx'), from: payer.wire, to: payee.wire, amount: 123_456n }]);
      node.sync();
      const fetched = await blockAt(chain, block.height, watched, ENV_ID);
      expect(fetched).toBeDefined();
      const payment = fetched!.hits.find((h) => h.watch.watchId === 'w-payee');
      expect(payment).toMatchObject({ type: 'payment', direction: 'in', amount: '123456', token: null });
      expect(fetched!.txHashes).toContain(payment!.txHash);
      // UTXO payouts are seen from the spent output's script, which the fake prints for its payers.
      expect(fetched!.hits.find((h) => h.watch.watchId === 'w-payer')).toMatchObject({ type: 'payout', direction: 'out', txHash: payment!.txHash });
      // Another environment's watches are not this one's.
      expect((await blockAt(chain, block.height, watched, ENV_ID + 1))?.hits).toEqual([]);
    });

    it('the parent hash of each block is the hash of the one below it; a block above the head is not there yet', async () => {
      node.chain.mine([]);
      node.sync();
      const head = node.chain.head;
      const none = watching({});
      const [below, top] = await Promise.all([blockAt(chain, head - 1, none, ENV_ID), blockAt(chain, head, none, ENV_ID)]);
      expect(top!.parentHash).toBe(below!.hash);
      expect(top!.hash).not.toBe(below!.hash);
      expect(await blockAt(chain, head + 5, none, ENV_ID)).toBeUndefined();
    });

    it('a reorg shows in the parent hash: the new block at the same height names another parent', async () => {
      node.chain.mine([]);
      node.sync();
      const head = node.chain.head;
      const none = watching({});
      const before = await blockAt(chain, head, none, ENV_ID);
      node.chain.orphan(2);
      node.chain.mine([]);
      node.chain.mine([]);
      node.sync();
      const after = await blockAt(chain, head, none, ENV_ID);
      expect(after!.hash).not.toBe(before!.hash);
      expect(after!.parentHash).not.toBe(before!.parentHash);
    });

    it('where the family has them: the finalized height is at most the head, and produced(from, to) names the heights with a block', async () => {
      node.chain.mine([]);
      node.sync();
      const head = node.chain.head;
      if (chain.finalized) {
        const finalized = await chain.finalized();
        if (finalized !== undefined) expect(finalized).toBeLessThanOrEqual(head);
      }
      if (!chain.produced) return;
      expect(await chain.produced(head - 3, head)).toEqual([head - 3, head - 2, head - 1, head]);
      const top = await blockAt(chain, head, watching({}), ENV_ID);
      expect(top!.parentHeight ?? head - 1).toBe(head - 1);
    });

    it('addresses round-trip: the display form parses to itself and the same match key; garbage is refused', () => {
      for (let i = 0; i < 5; i++) {
        const a = node.address();
        const parsed = family.parseAddress(env, a.given);
        expect(family.parseAddress(env, parsed.display)).toEqual(parsed);
        expect(family.parseAddress(env, ` ${a.given} `)).toEqual(parsed);
      }
      for (const bad of ['', 'not an address', '0x12']) expect(() => family.parseAddress(env, bad), bad).toThrow();
    });

    it('the payment URI names the address (and, where it has one, the amount)', async () => {
      const address = family.parseAddress(env, node.address().given).display;
      const uri = await family.payments.paymentUri({ env, address, asset: 'native', amountRaw: 1_500_000n, decimals: family.payments.native.decimals }, () => chain);
      expect(uri).toContain(address);
      expect(uri).not.toMatch(/\s/);
    });

    it(`derivation: ${family.payments.derivation ? 'child addresses of an account key are addresses of the environment, stable and distinct' : 'none (orders of this family need an address)'}`, () => {
      const derivation = family.payments.derivation;
      if (!derivation) {
        expect(family.payments.derivation).toBeUndefined();
        return;
      }
      const key = accountKey(family, env);
      expect(() => derivation.checkKey(key)).not.toThrow();
      expect(() => derivation.checkKey('xpub-not-a-key')).toThrow();
      const at = derivation.deriver(key, env);
      const addresses = [0, 1, 2].map(at);
      expect(new Set(addresses).size).toBe(3);
      expect(derivation.deriver(key, env)(1)).toBe(addresses[1]);
      for (const a of addresses) expect(family.parseAddress(env, a).display).toBe(a);
      expect(derivation.firstAddress(key, [env], () => 'conformance').first_address).toBe(addresses[0]);
    });
  });
}
