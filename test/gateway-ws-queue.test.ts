import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type TestService } from './helpers/service.js';
import { SendQueues, type QueuedSocket } from '../src/gateway/ws/queues.js';
import { HOLD_CALLS_OVER_QUEUED_BYTES, MAX_CALLS_IN_FLIGHT } from '../src/gateway/ws/server.js';

// Issue 21: a WebSocket client that sends calls and never reads the answers grew serve from
// 297 MB to 1,157 MB in 5.4 s. Every frame queued for a client now counts against caps per
// socket, per endpoint and in total; a client over them is closed with 1008.
const MiB = 1024 * 1024;
/** Each answer: half a MiB, so a handful of unread answers is over the caps below. */
const BIG = 'a'.repeat(MiB / 2);

let upstream: FakeEvm;

async function service(ws: Record<string, number>): Promise<{ t: TestService; urls: string[] }> {
  const t = await startTestService({
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'main', upstreams: [upstream.url] }] }],
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1e12, rps_limit: 1_000_000, endpoints_limit: 10 }],
    // One worker: the caps of endpoints and in total are split between workers.
    gateway: { workers: 1, ws },
  });
  const m = await t.merchant();
  const urls: string[] = [];
  for (const name of ['a', 'b']) {
    const e = (await m.call('POST', '/v1/endpoints', JSON.stringify({ name, network_environment_id: 1 }))).body.endpoint;
    urls.push(`${t.gatewayUrl.replace('http', 'ws')}/${e.uuid}`);
  }
  return { t, urls };
}

/** A metric's value summed over its series, from the service's /metrics text. */
async function metric(t: TestService, name: string, labels = ''): Promise<number> {
  const text = await t.service.metrics.text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      if (labels && !line.includes(labels)) continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

async function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
  return ws;
}

const closeOf = (ws: WebSocket) => new Promise<{ code: number; reason: string }>((resolve) => {
  ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
});

/**
 * A client that never reads: its socket paused, it sends calls with large answers until the
 * gateway counts a `too_slow` close, sampling the queued bytes meanwhile; then it reads again
 * and sees what the gateway sent, the close frame last.
 */
async function neverReads(t: TestService, ws: WebSocket): Promise<{ code: number; maxQueued: number }> {
  const closed = closeOf(ws);
  ws.pause();
  let maxQueued = 0;
  let id = 0;
  for (;;) {
    for (let i = 0; i < 20; i++) ws.send(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'eth_big', params: [] }));
    maxQueued = Math.max(maxQueued, await metric(t, 'rpcctl_ws_queued_bytes'));
    if (await metric(t, 'rpcctl_gateway_rejections_total', 'reason="too_slow"') >= 1) break;
    // Far past what the kernel's buffers and the cap can hold: the gateway should have closed it.
    if (id > 400) throw new Error('the gateway never closed a client that does not read');
    await new Promise((r) => setTimeout(r, 20));
  }
  ws.resume();
  // Reading again, the client answers the close: the gateway reads that, so the socket is gone
  // in moments rather than when ws's 30 s close timeout (counted from the gateway's close, which
  // the loop above saw shortly after) ends a handshake it never finished.
  const { code } = await Promise.race([closed, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the gateway did not finish the close handshake within 10 s')), 10_000).unref())]);
  return { code, maxQueued };
}

beforeAll(async () => {
  upstream = await new FakeEvm().start();
  upstream.respond = (seen, res) => {
    const call = JSON.parse(seen.body) as { id?: unknown; method?: string };
    if (Array.isArray(call) || call.method !== 'eth_big') return false;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: BIG }));
    return true;
  };
});

afterAll(async () => {
  await upstream?.stop();
});

describe('bytes queued for WebSocket clients', () => {
  it('a client that never reads is closed with 1008 once its queue is over the cap; the queue stays bounded', async () => {
    const { t, urls } = await service({ max_queued_bytes_per_socket: MiB });
    try {
      const ws = await open(urls[0]!);
      const { code, maxQueued } = await neverReads(t, ws);
      expect(code).toBe(1008);
      // The cap and at most the one frame that found it full.
      expect(maxQueued).toBeLessThanOrEqual(MiB + BIG.length + 1024);
      // Gone with the socket: nothing stays counted (or held).
      for (let i = 0; await metric(t, 'rpcctl_ws_queued_bytes') > 0; i++) {
        if (i > 500) throw new Error('queued bytes never went back to 0');
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await t.stop();
    }
  }, 120_000);

  it('over the endpoint\'s cap the client that does not read is closed, not a reader of the same endpoint', async () => {
    const { t, urls } = await service({ max_queued_bytes_per_endpoint: MiB });
    try {
      const reader = await open(urls[0]!);
      let readerClosed = false;
      reader.on('close', () => { readerClosed = true; });
      const answered = new Map<number, unknown>();
      reader.on('message', (d) => { const a = JSON.parse(d.toString()) as { id: number }; answered.set(a.id, a); });
      // The reader calls one after another, all the time the other client stalls.
      let stop = false;
      let sent = 0;
      const reading = (async () => {
        while (!stop && !readerClosed) {
          const id = ++sent;
          reader.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_blockNumber', params: [] }));
          for (let i = 0; !answered.has(id) && !readerClosed; i++) {
            if (i > 1000) throw new Error(`the reader's call ${id} was never answered`);
            await new Promise((r) => setTimeout(r, 10));
          }
        }
      })();
      const stalled = await open(urls[0]!);
      const { code } = await neverReads(t, stalled);
      expect(code).toBe(1008);
      stop = true;
      await reading;
      expect(readerClosed).toBe(false);
      expect(answered.size).toBe(sent);
      expect(sent).toBeGreaterThan(0);
      reader.close();
    } finally {
      await t.stop();
    }
  }, 120_000);
});

describe('calls in flight for one socket', () => {
  it(`a burst of 400 calls in one write reaches the upstream at most ${MAX_CALLS_IN_FLIGHT} at a time, and every call is answered`, async () => {
    // Pausing the socket stops its reads, not what ws had already read: a burst arrived whole
    // and was forwarded whole (issue 36: hundreds of 512 KiB answers in memory at once).
    let now = 0;
    let most = 0;
    const seen = upstream.respond;
    upstream.respond = (s, res) => {
      const call = JSON.parse(s.body) as { id?: unknown; method?: string };
      if (Array.isArray(call) || call.method !== 'eth_slow') return seen?.(s, res) ?? false;
      most = Math.max(most, ++now);
      setTimeout(() => {
        now--;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x1' }));
      }, 20);
      return true;
    };
    const { t, urls } = await service({});
    try {
      const ws = await open(urls[0]!);
      const ids: number[] = [];
      const done = new Promise<void>((resolve) => ws.on('message', (d) => {
        ids.push((JSON.parse(d.toString()) as { id: number }).id);
        if (ids.length === 400) resolve();
      }));
      // One write: 400 frames.
      const frames = Array.from({ length: 400 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'eth_slow', params: [] }));
      (ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket.cork();
      for (const f of frames) ws.send(f);
      (ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket.uncork();
      await done;
      expect(most).toBeLessThanOrEqual(MAX_CALLS_IN_FLIGHT);
      expect(most).toBeGreaterThan(1);
      expect(ids).toHaveLength(400);
      ws.close();
    } finally {
      upstream.respond = seen;
      await t.stop();
    }
  }, 120_000);
  it(`a client that never reads gets no new call while ${HOLD_CALLS_OVER_QUEUED_BYTES} bytes of its answers are unwritten, and every call is answered once it reads`, async () => {
    // Issue 36: before the hold, such a client cost the process 277-310 MB (every call it sent
    // was answered upstream) before its queue reached the cap and it was closed.
    const ANSWER = 'h'.repeat(200 * 1024);
    const CALLS = 200;
    let calls = 0;
    const seen = upstream.respond;
    upstream.respond = (s, res) => {
      const call = JSON.parse(s.body) as { id?: unknown; method?: string };
      if (Array.isArray(call) || call.method !== 'eth_hold') return seen?.(s, res) ?? false;
      calls++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: ANSWER }));
      return true;
    };
    // A socket cap above all the answers (40 MB): without the hold every call would be answered
    // upstream, not cut short by the socket's close at 8 MiB.
    const { t, urls } = await service({ max_queued_bytes_per_socket: 48 * MiB });
    try {
      const ws = await open(urls[0]!);
      const ids: number[] = [];
      let closed = false;
      ws.on('close', () => { closed = true; });
      const done = new Promise<void>((resolve) => ws.on('message', (d) => {
        ids.push((JSON.parse(d.toString()) as { id: number }).id);
        if (ids.length === CALLS) resolve();
      }));
      ws.pause();
      for (let id = 1; id <= CALLS; id++) ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_hold', params: [] }));
      // Settled: the upstream has had calls, and its count has not moved for 300 ms since. (Counted
      // from the first call: on a loaded machine the first took over 300 ms, and 0 was read as settled.)
      const deadline = Date.now() + 20_000;
      for (let last = 0, since = Date.now(); last === 0 || Date.now() - since < 300; await new Promise((r) => setTimeout(r, 20))) {
        if (calls !== last) { last = calls; since = Date.now(); }
        if (Date.now() > deadline) throw new Error(`the upstream's calls never stopped growing (${calls})`);
      }
      // What the hold lets through, plus what the loopback's kernel buffers take before the
      // gateway sees its writes wait (a few MiB on Linux: the sender's buffer grows to
      // tcp_wmem's 4 MiB at most, the paused reader's stays near tcp_rmem's 128 KiB default; here
      // 40 calls in all, against 200 without the hold).
      const kernel = 8 * MiB;
      const bound = Math.ceil((HOLD_CALLS_OVER_QUEUED_BYTES + kernel) / ANSWER.length) + MAX_CALLS_IN_FLIGHT;
      expect(bound).toBeLessThan(CALLS / 2);
      expect(calls).toBeGreaterThan(0);
      expect(calls).toBeLessThanOrEqual(bound);
      ws.resume();
      await done;
      expect(closed).toBe(false);
      expect(calls).toBe(CALLS);
      // Every call answered once: nothing dropped, nothing twice (answers of calls in flight
      // together may come in any order).
      expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: CALLS }, (_, i) => i + 1));
      ws.close();
    } finally {
      upstream.respond = seen;
      await t.stop();
    }
  }, 120_000);
});

describe('SendQueues', () => {
  const socket = (ep: number): QueuedSocket & { closes: number } => ({ ep: { id: ep }, queued: 0, closes: 0 });
  const queues = () => new SendQueues<ReturnType<typeof socket>>({ perSocket: 100, perEndpoint: 150, total: 200 }, (s) => { s.closes++; });

  it('closes a socket over its own cap and drops the frame', () => {
    const q = queues();
    const a = socket(1);
    q.open(a);
    expect(q.admit(a, 60)).toBe(true);
    q.add(a, 60);
    expect(q.admit(a, 60)).toBe(false);
    expect(a.closes).toBe(1);
    expect(q.admit(a, 1)).toBe(false); // closed: nothing more for it
  });

  it('over the total, closes the socket holding the most, and lets a reader\'s frame go', () => {
    const q = queues();
    const hog = socket(1);
    const other = socket(2);
    const reader = socket(3);
    for (const s of [hog, other, reader]) q.open(s);
    q.add(hog, 90);
    q.add(other, 80);
    expect(q.admit(reader, 40)).toBe(true);
    expect(hog.closes).toBe(1);
    expect(reader.closes).toBe(0);
    // The hog's bytes count until its socket is gone; then the total is back.
    expect(q.total).toBe(170);
    q.release(hog);
    expect(q.total).toBe(80);
    q.add(hog, -90); // a late write callback of the gone socket changes nothing
    expect(q.total).toBe(80);
  });

  it('while only closed sockets hold the bytes, a socket with nothing queued is served; one holding bytes is closed', () => {
    const q = queues();
    const hog = socket(1);
    const reader = socket(2);
    const late = socket(2);
    for (const s of [hog, reader, late]) q.open(s);
    q.add(hog, 95);
    expect(q.admit(hog, 10)).toBe(false); // over its own cap: closed
    q.add(reader, 95);
    // Over the total: the reader holds the most of the open sockets, and is closed; late's frame goes.
    expect(q.admit(late, 20)).toBe(true);
    expect(reader.closes).toBe(1);
    q.add(late, 20);
    // Late holds bytes now and is the only open holder: over the total, it is closed.
    expect(q.admit(late, 20)).toBe(false);
    expect(late.closes).toBe(1);
    // A socket with nothing queued still gets its frame while closed ones drain.
    const fresh = socket(3);
    q.open(fresh);
    expect(q.admit(fresh, 20)).toBe(true);
    expect(fresh.closes).toBe(0);
  });
});
