import { describe, expect, it } from 'vitest';
import type { ChainAdapter } from '../chains/family.js';
import type { Environment } from '../store/index.js';
import type { EnvironmentChains } from '../watch/chains.js';
import { Finality } from './holds.js';

const env = { id: 3, slug: 'local', finalityDepth: 10, upstreams: ['http://node'], network: { slug: 'down' } } as unknown as Environment;

/** A node that answers `head` from `heads` in turn; `undefined` there is a refused connection. */
function node(heads: Array<number | undefined>) {
  let asked = 0;
  const adapter = {
    head: async () => {
      const h = heads[Math.min(asked++, heads.length - 1)];
      if (h === undefined) throw new Error('eth_blockNumber: connect ECONNREFUSED 127.0.0.1:9');
      return h;
    },
  } as unknown as ChainAdapter;
  return { chains: { of: () => adapter } as unknown as EnvironmentChains, asked: () => asked };
}

describe('the final height of an environment', () => {
  it('asks a node that is away once a second, not once a row, and says so once a minute', async () => {
    const n = node([undefined]);
    const lines: string[] = [];
    const finality = new Finality(n.chains, (l) => lines.push(l));
    // A pass over 501 lines of that network.
    for (let i = 0; i < 501; i++) expect(await finality.height(env, 10_000)).toBeUndefined();
    expect(n.asked()).toBe(1);
    expect(lines).toEqual(['payments: finality of down-local unknown: eth_blockNumber: connect ECONNREFUSED 127.0.0.1:9']);
    // The next passes ask again, a second on; the log waits a minute.
    expect(await finality.height(env, 11_000)).toBeUndefined();
    expect(n.asked()).toBe(2);
    expect(lines).toHaveLength(1);
    expect(await finality.height(env, 70_000)).toBeUndefined();
    expect(lines).toHaveLength(2);
  });

  it('a node back again answers at once, and its next outage is told at once', async () => {
    const n = node([undefined, 100, undefined]);
    const lines: string[] = [];
    const finality = new Finality(n.chains, (l) => lines.push(l));
    expect(await finality.height(env, 1_000)).toBeUndefined();
    expect(await finality.height(env, 2_000)).toBe(91);
    expect(await finality.height(env, 2_500)).toBe(91);
    expect(await finality.height(env, 3_000)).toBeUndefined();
    expect(lines).toHaveLength(2);
  });
});
