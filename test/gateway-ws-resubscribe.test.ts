import { rmSync } from 'node:fs';
import { WebSocketProvider } from 'ethers';
import { createPublicClient, webSocket, type Block } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { freePort } from './helpers/clients.js';
import { dropTestSchema, startTestService, type TestService } from './helpers/service.js';

// docs/gateway.md: a restart of `rpcctl serve` ends every subscription on a client's socket,
// and ethers, viem and web3.js do not make the app whole again. Its recipes (reconnect,
// subscribe again, fetch the blocks mined meanwhile) are run here, as written there, across a
// real restart with blocks mined while the gateway is down: each block is handled once, in order.
let anvil: Anvil;
let t: TestService | undefined;
let dataDir: string | undefined;
let port: number;
let url: string;
const stops: Array<() => unknown> = [];

async function waitFor(what: string, fn: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const config = () => ({
  networks: [{
    slug: 'anvil', name: 'Anvil', family: 'evm' as const,
    environments: [{ slug: 'local', upstreams: [anvil.url] }],
    credits: { default: 1, methods: {} },
  }],
  gateway: { port, ws: { poll_interval_ms: 100 } },
});

async function start(): Promise<TestService> {
  t = await startTestService(config(), { dataDir, keepDataDir: true });
  dataDir = t.dataDir;
  return t;
}

beforeAll(async () => {
  anvil = await startAnvil();
  port = await freePort();
  const first = await start();
  const m = await first.merchant({ plan: 'pro' });
  const r = await m.call('POST', '/v1/endpoints', JSON.stringify({ name: 'ws-restart', network_slug: 'anvil', env_slug: 'local' }));
  url = `${first.gatewayUrl.replace('http', 'ws')}/${r.body.endpoint.uuid}`;
}, 60_000);

afterAll(async () => {
  for (const stop of stops) await stop();
  await t?.stop();
  if (dataDir) {
    await dropTestSchema(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }
  await anvil?.stop();
});

/** Blocks mined, the service stopped, more mined while it is down, started again on the same port, one more mined. */
async function restartWithBlocksMissed(handled: bigint[]): Promise<bigint> {
  await anvil.test.mine({ blocks: 1 });
  const before = await anvil.public.getBlockNumber();
  await waitFor('the block before the restart', () => handled.includes(before));
  await t!.stop();
  t = undefined;
  await anvil.test.mine({ blocks: 3 });
  await start();
  // The chain goes on: a block every half second until the client has one from after the restart.
  const until = Date.now() + 45_000;
  for (;;) {
    await anvil.test.mine({ blocks: 1 });
    const head = await anvil.public.getBlockNumber();
    const seen = await new Promise<boolean>((resolve) => {
      const check = setInterval(() => { if (handled.includes(head)) { clearInterval(check); resolve(true); } }, 25);
      setTimeout(() => { clearInterval(check); resolve(handled.includes(head)); }, 500);
    });
    if (seen) return head;
    if (Date.now() > until) throw new Error(`no block after the restart handled (handled: ${handled.join(',')})`);
  }
}

describe('WebSocket clients across a restart of the service (the recipes of docs/gateway.md)', () => {
  it('viem: reconnect, subscribe again, fetch the missed blocks', async () => {
    const handled: bigint[] = [];
    async function handle(block: Block) { handled.push(block.number!); }

    // From docs/gateway.md, as written there (closeCurrent and stopped let the test end it).
    let last: bigint | undefined; // the highest block handled
    let closeCurrent: (() => Promise<void>) | undefined;
    let stopped = false;
    function follow(delayMs = 1000) {
      if (stopped) return;
      const c = createPublicClient({ transport: webSocket(url, { reconnect: false }) });
      closeCurrent = () => c.transport.getRpcClient().then((rpc) => rpc.close());
      let done = false;
      const unwatch = c.watchBlocks({
        onBlock: async (block) => {
          try {
            // Blocks mined while the socket was down: fetched in order, before the live one.
            for (let n = last === undefined ? block.number : last + 1n; n < block.number; n++) {
              await handle(await c.getBlock({ blockNumber: n }));
            }
            if (last === undefined || block.number > last) await handle(block);
            last = last === undefined || block.number > last ? block.number : last;
            delayMs = 1000;
          } catch {
            // The socket closed mid-catch-up: onError starts over from `last`.
          }
        },
        onError: () => {
          if (done) return;
          done = true;
          unwatch();
          // Closing drops viem's cached socket for this URL, so the next client opens a new one.
          c.transport.getRpcClient().then((rpc) => rpc.close()).catch(() => {});
          setTimeout(() => follow(Math.min(delayMs * 2, 30_000)), delayMs);
        },
      });
    }
    follow();
    const stop = async () => { stopped = true; await closeCurrent?.().catch(() => {}); };
    stops.push(stop);

    await waitFor('viem subscribed', () => (t?.service.gateway.websockets.subscriptions ?? 0) === 1);
    const head = await restartWithBlocksMissed(handled);
    await stop();
    await waitFor('viem gone', () => t?.service.gateway.websockets.subscriptions === 0);
    const first = handled[0]!;
    expect(handled).toEqual(Array.from({ length: Number(head - first) + 1 }, (_, i) => first + BigInt(i)));
  }, 90_000);

  it('ethers v6: a new provider, subscribed again, fetching the missed blocks', async () => {
    const handled: bigint[] = [];
    async function handle(block: { number: number } | null) { handled.push(BigInt(block!.number)); }

    // From docs/gateway.md, as written there (stopped lets the test end it).
    let last: number | undefined;
    let provider: WebSocketProvider | undefined;
    let stopped = false;
    function follow(delayMs = 1000) {
      if (stopped) return;
      const p = new WebSocketProvider(url);
      provider = p;
      const restart = () => {
        // A provider whose socket never opened holds its eth_subscribe: destroying it would reject that unhandled.
        if (p.ready) void p.destroy();
        setTimeout(() => follow(Math.min(delayMs * 2, 30_000)), delayMs);
      };
      // ethers has no close event of its own: watch the socket it uses (an error is followed by a close).
      const ws = p.websocket as unknown as { onclose: () => void; onerror: () => void };
      ws.onerror = () => {};
      ws.onclose = restart;
      p.on('block', async (n: number) => {
        try {
          for (let b = last === undefined ? n : last + 1; b < n; b++) await handle(await p.getBlock(b));
          if (last === undefined || n > last) await handle(await p.getBlock(n));
          last = Math.max(last ?? n, n);
          delayMs = 1000;
        } catch {
          // The socket closed mid-catch-up: onclose starts over from `last`.
        }
      }).catch(() => {});
    }
    follow();
    const stop = async () => { stopped = true; await provider?.destroy(); };
    stops.push(stop);

    await waitFor('ethers subscribed', () => (t?.service.gateway.websockets.subscriptions ?? 0) === 1);
    const head = await restartWithBlocksMissed(handled);
    await stop();
    const first = handled[0]!;
    expect(handled).toEqual(Array.from({ length: Number(head - first) + 1 }, (_, i) => first + BigInt(i)));
  }, 90_000);
});
