import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Config } from '../../config/index.js';
import type { Environment, Network } from '../../store/index.js';
import { clientIp, IpAllowlist } from '../../util/ip.js';
import { requestId, type Logger } from '../../log/index.js';
import { upstreamLabel } from '../../metrics/index.js';
import { ERROR_BODIES, RPC_ERRORS, rpcError, upstreamFailure } from '../errors.js';
import { bill } from '../bill.js';
import { traitsOf } from '../../chains/traits.js';
import type { GatewayMetrics } from '../metrics.js';
import type { EndpointLookup, EndpointState } from '../registry.js';
import type { UsageMeter } from '../meter.js';
import { rpsWindow } from '../http/context.js';
import { hostMatches } from '../http/route.js';
import { CLOSE, Connection, isCall, type Call } from './connection.js';
import { refuseUpgrade } from './refuse-upgrade.js';
import type { WindowLimiter } from '../../limits/index.js';
import { networkLabels, UNKNOWN_NETWORK } from '../metrics.js';
import { UpstreamError, type UpstreamDirectory } from '../upstreams/index.js';
import { routeHints, type CallHandler } from '../calls.js';
import { parseJson, type ParsedRpc } from '../jsonrpc.js';
import { SendQueues } from './queues.js';
import { FeedError, type Subscriber } from './feed.js';
import { SubscriptionHub } from './hub.js';
import { PollSource, WsSource } from './sources.js';
import { jsonDeeperThan } from '../../util/json-depth.js';

/**
 * Messages of one socket being answered at once; past this its reads pause (TCP pushes back on
 * the client) so that the answers in flight, not yet queued, stay bounded too.
 */
const MAX_CALLS_IN_FLIGHT = 64;
/** A paused endpoint or an allowlist change closes sockets within this long. */
const SWEEP_MS = 250;
/** Price of one notification where the network's `credits.methods` has no `eth_subscription`. */
export const DEFAULT_NOTIFICATION_CREDITS = 10;

export function notificationPrice(network: Network): number {
  return Object.hasOwn(network.credits.methods, 'eth_subscription') ? network.credits.methods.eth_subscription! : DEFAULT_NOTIFICATION_CREDITS;
}

export interface WsGatewayDeps {
  config: Config;
  registry: EndpointLookup;
  meter: Pick<UsageMeter, 'record'>;
  upstreams: UpstreamDirectory;
  metrics: GatewayMetrics;
  log: (line: string) => void;
  /** Sampled access log (`gateway.access_log_sample`): one line per socket when it closes. */
  accessLog?: Logger;
  /** RPS windows shared by every instance (Redis), as for HTTP; without it in memory. */
  sharedRps?: WindowLimiter;
  /** This machine's shared RPS windows, as for HTTP. */
  localRps: (ep: EndpointState, cost: number) => number;
  /** Open sockets per endpoint counted with the other gateway workers; without it, this gateway's own. */
  socketPlaces?: { acquire(ep: EndpointState, max: number): boolean; release(ep: EndpointState): void };
  /** Called when the number of client subscriptions changed. */
  onSubscriptions?: () => void;
  /** The finality cache, null retries and eth_getLogs guards, as over HTTP (calls.ts). */
  calls?: CallHandler;
  /** Gateway workers sharing the `max_queued_bytes*` caps of endpoints and in total (each gets its share). */
  workers?: number;
}

/**
 * `eth_subscribe` and every other JSON-RPC call over WebSocket on the endpoint URL. The upgrade
 * passes the same checks as an HTTP request (route, Host, pause, allowlist); calls count toward
 * the RPS window and usage like HTTP calls and are forwarded to the HTTP upstreams; the
 * subscriptions themselves are served by per-environment hubs (see hub.ts and sources.ts).
 */
export class WebSocketGateway {
  readonly #d: WsGatewayDeps;
  readonly #wss: WebSocketServer;
  readonly #trusted: IpAllowlist;
  readonly #prefix: string;
  readonly #conns = new Set<Connection>();
  readonly #perEndpoint = new Map<number, number>();
  readonly #hubs = new Map<number, SubscriptionHub>();
  readonly #wsUrls = new Map<string, string[]>();
  readonly #sweep: NodeJS.Timeout;
  readonly #ping: NodeJS.Timeout;
  readonly #takeRps: (ep: EndpointState, cost: number) => number | Promise<number>;
  readonly #queues: SendQueues<Connection>;

  constructor(deps: WsGatewayDeps) {
    this.#d = deps;
    this.#takeRps = rpsWindow(deps.sharedRps, deps.localRps);
    const g = deps.config.gateway;
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: g.ws.max_message_bytes, perMessageDeflate: false, clientTracking: false });
    this.#trusted = new IpAllowlist(g.trusted_proxies);
    this.#prefix = `${g.host_prefix}-`;
    for (const n of deps.config.networks) for (const e of n.environments) this.#wsUrls.set(`${n.slug}-${e.slug}`, e.ws_upstreams);
    this.#sweep = setInterval(() => this.#enforce(), SWEEP_MS);
    this.#sweep.unref();
    this.#ping = setInterval(() => this.#heartbeat(), g.ws.ping_interval_ms);
    this.#ping.unref();
    // The endpoint and total caps are the machine's: each worker holds its share, as with the cache.
    const workers = Math.max(1, deps.workers ?? 1);
    this.#queues = new SendQueues<Connection>({
      perSocket: g.ws.max_queued_bytes_per_socket,
      perEndpoint: Math.ceil(g.ws.max_queued_bytes_per_endpoint / workers),
      total: Math.ceil(g.ws.max_queued_bytes / workers),
    }, (conn) => {
      deps.metrics.rejections.inc({ ...conn.labels, reason: 'too_slow', transport: 'ws' });
      conn.close(CLOSE.tooSlow);
    }, (total) => deps.metrics.wsQueuedBytes.set(total));
  }

  /** Bytes queued for client sockets in this worker (see SendQueues). */
  get queuedBytes(): number {
    return this.#queues.total;
  }

  attach(server: Server): void {
    // Other upgrades (curl's `Upgrade: h2c` on a POST) stay plain HTTP requests (Node >= 24.9;
    // older versions send them to the handler below, which refuses them with 400).
    (server as Server & { shouldUpgradeCallback?: (req: IncomingMessage) => boolean }).shouldUpgradeCallback = (req) => (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#upgrade(req, socket, head));
  }

  get sockets(): number {
    return this.#conns.size;
  }

  get subscriptions(): number {
    let n = 0;
    for (const c of this.#conns) n += c.subs.size;
    return n;
  }

  /** Closes every client socket (1001) and every upstream feed. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    clearInterval(this.#ping);
    const closing = [...this.#conns].map((c) => new Promise<void>((resolve) => {
      const timer = setTimeout(() => { c.ws.terminate(); resolve(); }, 1000);
      c.ws.once('close', () => { clearTimeout(timer); resolve(); });
      c.close(CLOSE.shuttingDown);
    }));
    await Promise.all(closing);
    for (const hub of this.#hubs.values()) hub.close();
    this.#hubs.clear();
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return refuseUpgrade(socket, 400, 'invalidRequest');
    const url = req.url ?? '/';
    const uuid = url.slice(1, 37);
    const after = url.charCodeAt(37);
    const ep = url.length === 37 || after === 47 || after === 63 ? this.#d.registry.get(uuid) : undefined;
    const env = ep?.env;
    const m = this.#d.metrics;
    if (!ep || !env || !hostMatches(this.#prefix, req.headers.host, ep)) {
      m.rejections.inc({ ...UNKNOWN_NETWORK, reason: 'not_found', transport: 'ws' });
      return refuseUpgrade(socket, 404, 'notFound');
    }
    const labels = networkLabels(env);
    const rest = url.slice(37);
    if (!(rest === '' || rest === '/' || rest.startsWith('?') || rest.startsWith('/?'))) {
      m.rejections.inc({ ...labels, reason: 'not_found', transport: 'ws' });
      return refuseUpgrade(socket, 404, 'notFound');
    }
    if (ep.paused) {
      m.rejections.inc({ ...labels, reason: 'paused', transport: 'ws' });
      return refuseUpgrade(socket, 403, 'paused');
    }
    const ip = clientIp(req, this.#trusted);
    if (ep.allowlist.size > 0 && !ep.allowlist.allows(ip)) {
      m.rejections.inc({ ...labels, reason: 'ip_not_allowed', transport: 'ws' });
      return refuseUpgrade(socket, 403, 'ipNotAllowed');
    }
    if (!traitsOf(env.network.family).gateway.websocket) {
      m.rejections.inc({ ...labels, reason: 'invalid_request', transport: 'ws' });
      return refuseUpgrade(socket, 400, 'invalidRequest', 'WebSocket is served for JSON-RPC networks only');
    }
    if (!this.#acquireSlot(ep)) {
      m.rejections.inc({ ...labels, reason: 'too_many_sockets', transport: 'ws' });
      return refuseUpgrade(socket, 429, 'rps', `too many WebSocket connections (at most ${this.#d.config.gateway.ws.max_sockets_per_endpoint} per endpoint)`);
    }
    const id = requestId(req);
    // ws drops a bad handshake, or a socket closed mid-upgrade, without calling back: the slot
    // held for it comes back when that socket closes, or a client could fill an endpoint's quota.
    let accepted = false;
    socket.once('close', () => { if (!accepted) this.#releaseSlot(ep); });
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      accepted = true;
      this.#accept(ws, ep, env, ip, id);
    });
  }

  #acquireSlot(ep: EndpointState): boolean {
    const max = this.#d.config.gateway.ws.max_sockets_per_endpoint;
    if (this.#d.socketPlaces) return this.#d.socketPlaces.acquire(ep, max);
    const count = this.#perEndpoint.get(ep.id) ?? 0;
    if (count >= max) return false;
    this.#perEndpoint.set(ep.id, count + 1);
    return true;
  }

  #releaseSlot(ep: EndpointState): void {
    if (this.#d.socketPlaces) return this.#d.socketPlaces.release(ep);
    const endpointId = ep.id;
    const n = (this.#perEndpoint.get(endpointId) ?? 1) - 1;
    if (n <= 0) this.#perEndpoint.delete(endpointId);
    else this.#perEndpoint.set(endpointId, n);
  }

  #accept(ws: WebSocket, ep: EndpointState, env: Environment, ip: string, id: string): void {
    const conn = new Connection(ws, ep, env, ip, this.#queues);
    this.#conns.add(conn);
    this.#queues.open(conn);
    this.#d.metrics.wsSockets.inc(conn.labels);
    ws.on('pong', () => { conn.alive = true; });
    ws.on('message', (data, isBinary) => {
      if (++conn.inFlight >= MAX_CALLS_IN_FLIGHT) ws.pause();
      this.#onMessage(conn, isBinary ? Buffer.from(data as Buffer).toString('utf8') : (data as Buffer).toString('utf8')).catch((err: unknown) => {
        this.#d.log(`gateway: websocket message failed: ${(err as Error)?.stack ?? String(err)}`);
        conn.close([1011, 'internal error']);
      }).finally(() => {
        if (--conn.inFlight < MAX_CALLS_IN_FLIGHT && ws.isPaused && ws.readyState === WebSocket.OPEN) ws.resume();
      });
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', (code) => this.#closed(conn, code, id));
  }

  #closed(conn: Connection, code: number, id: string): void {
    if (conn.closed) return;
    conn.closed = true;
    const rate = this.#d.config.gateway.access_log_sample;
    if (this.#d.accessLog && rate > 0 && (rate >= 1 || Math.random() < rate)) {
      this.#d.accessLog.info({
        req_id: id, transport: 'ws', route: '/{endpoint_uuid}', network: conn.network, status: 101, close_code: code,
        duration_ms: Math.round(performance.now() - conn.opened), calls: conn.calls, notifications: conn.notifications,
        endpoint_id: conn.ep.id, account_id: conn.ep.accountId, ip: conn.ip,
      }, 'websocket closed');
    }
    this.#conns.delete(conn);
    this.#queues.release(conn);
    this.#releaseSlot(conn.ep);
    this.#d.metrics.wsSockets.dec(conn.labels);
    const hub = this.#hubs.get(conn.env.id);
    for (const { sub, feed } of conn.subs.values()) hub?.unsubscribe(sub, feed);
    const had = conn.subs.size;
    conn.subs.clear();
    if (had > 0) this.#d.onSubscriptions?.();
  }

  async #onMessage(conn: Connection, text: string): Promise<void> {
    // Forwarding serialises the call again, which recurses: refused as the HTTP path refuses it.
    if (jsonDeeperThan(text)) return conn.send(ERROR_BODIES.tooDeep.toString());
    let value: unknown;
    try {
      value = parseJson(text);
    } catch {
      return conn.send(ERROR_BODIES.parse.toString());
    }
    const m = this.#d.metrics;
    if (!Array.isArray(value)) {
      if (!isCall(value)) {
        const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id ?? null : null;
        return conn.send(JSON.stringify(rpcError(-32600, 'invalid request', id)));
      }
      m.wsMessages.inc(conn.labels);
      conn.calls++;
      if (await this.#takeRps(conn.ep, 1) === 0) {
        m.rejections.inc({ ...conn.labels, reason: 'rps', transport: 'ws' });
        return conn.send(JSON.stringify(rpcError(-32005, 'rps limit exceeded', value.id ?? null)));
      }
      const local = await this.#local(conn, value);
      if (local !== undefined) return conn.send(JSON.stringify(local));
      return conn.send(await this.#forward(conn, [value], false));
    }
    if (value.length === 0) return conn.send(ERROR_BODIES.invalidRequest.toString());
    if (value.length > this.#d.config.gateway.max_batch) return conn.send(ERROR_BODIES.batchTooLarge.toString());
    const calls = value.filter(isCall);
    const rejected = value.filter((v) => !isCall(v)).map((v) => rpcError(-32600, 'invalid request', typeof v === 'object' && v !== null ? (v as { id?: unknown }).id ?? null : null));
    m.wsMessages.inc(conn.labels, calls.length);
    conn.calls += calls.length;
    // As over HTTP (docs/gateway.md): a batch is admitted as far as the window allows, and the
    // rest are answered in place, each with its own id.
    const admitted = calls.length > 0 ? await this.#takeRps(conn.ep, calls.length) : 0;
    const answers: unknown[] = [...rejected];
    if (admitted < calls.length) {
      m.rejections.inc({ ...conn.labels, reason: 'rps', transport: 'ws' }, calls.length - admitted);
      for (const call of calls.slice(admitted)) answers.push(rpcError(-32005, 'rps limit exceeded', call.id ?? null));
    }
    const remote: Call[] = [];
    for (const call of calls.slice(0, admitted)) {
      const local = await this.#local(conn, call);
      if (local !== undefined) answers.push(local);
      else remote.push(call);
    }
    if (remote.length > 0) {
      const text = await this.#forward(conn, remote, true);
      try {
        const got = parseJson(text);
        if (Array.isArray(got)) answers.push(...got);
        else answers.push(got);
      } catch {
        answers.push(...remote.map((c) => rpcError(-32010, 'upstream failed', c.id ?? null)));
      }
    }
    conn.send(JSON.stringify(answers));
  }

  /** Answers the calls the gateway serves itself; undefined for the rest. */
  async #local(conn: Connection, call: Call): Promise<unknown> {
    const id = call.id ?? null;
    if (call.method === 'eth_subscribe') {
      if (conn.subs.size + conn.pendingSubs >= this.#d.config.gateway.ws.max_subscriptions_per_socket) {
        return rpcError(-32005, `subscription limit reached (${this.#d.config.gateway.ws.max_subscriptions_per_socket} per socket)`, id);
      }
      const subId = `0x${randomHex()}`;
      const network = conn.env.network;
      const price = notificationPrice(network);
      const meter = this.#d.meter;
      const notifications = this.#d.metrics.wsNotifications.labels(conn.labels);
      const head = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${subId}","result":`;
      const sub: Subscriber = {
        id: subId,
        deliver: (json) => {
          if (conn.closed || conn.ws.readyState !== WebSocket.OPEN) return;
          conn.send(`${head}${json}}}`);
          if (conn.ws.readyState !== WebSocket.OPEN) return;
          notifications.inc();
          conn.notifications++;
          meter.record(conn.ep.id, conn.ep.accountId, 'eth_subscription', price);
        },
        lost: () => conn.close(CLOSE.noUpstream),
      };
      conn.pendingSubs++;
      try {
        const feed = await this.#hub(conn.env).subscribe(sub, call.params);
        if (conn.closed) {
          this.#hub(conn.env).unsubscribe(sub, feed);
          return undefined;
        }
        conn.subs.set(subId, { sub, feed });
        this.#d.onSubscriptions?.();
      } catch (err) {
        if (err instanceof FeedError) return rpcError(err.rpcCode, err.message, id);
        throw err;
      } finally {
        conn.pendingSubs--;
      }
      this.#meterCall(conn, 'eth_subscribe');
      return { jsonrpc: '2.0', id, result: subId };
    }
    if (call.method === 'eth_unsubscribe') {
      const subId = Array.isArray(call.params) ? call.params[0] : undefined;
      const entry = typeof subId === 'string' ? conn.subs.get(subId) : undefined;
      if (entry) {
        conn.subs.delete(subId as string);
        this.#d.onSubscriptions?.();
        this.#hub(conn.env).unsubscribe(entry.sub, entry.feed);
      }
      this.#meterCall(conn, 'eth_unsubscribe');
      return { jsonrpc: '2.0', id, result: entry !== undefined };
    }
    return undefined;
  }

  /**
   * Sends calls to the environment's HTTP upstreams; meters them when the upstream answered 2xx.
   * The same guards as over HTTP apply first (calls.ts): cache hits are answered (and metered)
   * here, and an `eth_getLogs` over the range limit is refused, split or capped.
   */
  async #forward(conn: Connection, calls: Call[], batch: boolean): Promise<string> {
    const env = conn.env;
    const handler = this.#d.calls;
    const units = (c: Call) => handler?.units(env, c) ?? 1;
    let refused: unknown[] = [];
    try {
      if (handler && !batch) {
        const body = Buffer.from(JSON.stringify(calls[0]));
        const answer = await handler.single(env, calls[0]!, body);
        if (answer) {
          if (answer.metered) this.#meterCall(conn, calls[0]!.method, answer.units);
          return answer.body.toString('utf8');
        }
      } else if (handler) {
        const parsed: Extract<ParsedRpc, { kind: 'batch' }> = {
          kind: 'batch', valid: [...calls], calls: calls.map((c) => ({ method: c.method, params: c.params, id: c.id })), rejected: [],
        };
        handler.screenBatch(env, parsed);
        if (parsed.valid.length === 0) return JSON.stringify(parsed.rejected);
        const answer = await handler.batch(env, parsed);
        if (answer) {
          for (const c of answer.meteredCalls) this.#meterCall(conn, c.method, units(c));
          return answer.body.toString('utf8');
        }
        calls = parsed.valid as Call[];
        refused = parsed.rejected;
      }
      const res = await this.#d.upstreams.for(env.id, env.upstreams).send({
        method: 'POST', path: '', contentType: 'application/json', rpcMethod: batch ? '' : calls[0]!.method,
        body: Buffer.from(JSON.stringify(batch ? calls : calls[0])),
      }, batch ? { needsHead: true, methods: calls.map((c) => c.method) } : routeHints(calls[0]!));
      const text = await res.body.text();
      if (res.status >= 200 && res.status < 300) for (const c of calls) this.#meterCall(conn, c.method, units(c));
      if (refused.length === 0) return text;
      try {
        const got = parseJson(text);
        if (Array.isArray(got)) return JSON.stringify([...got, ...refused]);
      } catch { /* not JSON: the caller answers upstream failed */ }
      return text;
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      const { code, message } = RPC_ERRORS[upstreamFailure(err).kind];
      const answers = [...calls.map((c) => rpcError(code, message, c.id ?? null)), ...refused];
      return JSON.stringify(batch ? answers : answers[0]);
    }
  }

  #meterCall(conn: Connection, method: string, units = 1): void {
    bill(this.#d.meter, conn.ep, conn.env.network, method, units);
  }

  #hub(env: Environment): SubscriptionHub {
    let hub = this.#hubs.get(env.id);
    if (hub) return hub;
    const name = `${env.network.slug}-${env.slug}`;
    const http = this.#d.upstreams.for(env.id, env.upstreams);
    const urls = this.#wsUrls.get(name) ?? [];
    const g = this.#d.config.gateway;
    const m = this.#d.metrics;
    const labels = networkLabels(env);
    const subscriptions = (type: string, delta: number) => m.wsSubscriptions.inc({ ...labels, type }, delta);
    if (urls.length === 0) {
      hub = new SubscriptionHub(new PollSource(http, g.ws.poll_interval_ms), subscriptions);
    } else {
      let created: SubscriptionHub | undefined = undefined;
      const poll = env.upstreams.length > 0 ? new PollSource(http, g.ws.poll_interval_ms) : undefined;
      const source = new WsSource(urls, http, poll, {
        lost: (feeds, reason) => {
          this.#d.log(`gateway: ${name}: ${feeds.length} subscription feed(s) lost: ${reason}`);
          created?.lost(feeds, reason);
        },
        upstreamFailed: (url, err) => {
          m.upstreamFailures.inc({ ...labels, upstream: upstreamLabel(url), reason: 'ws' });
          this.#d.log(`gateway: ${name}: WebSocket upstream ${upstreamLabel(url)} failed: ${err}`);
        },
        resubscribed: (url, feeds) => {
          m.wsResubscribes.inc(labels);
          this.#d.log(`gateway: ${name}: ${feeds} subscription feed(s) moved to ${upstreamLabel(url)}`);
        },
        polling: (feeds) => {
          m.wsResubscribes.inc(labels);
          this.#d.log(`gateway: ${name}: no WebSocket upstream left; ${feeds} subscription feed(s) lost their upstream and are polled over HTTP until one is back`);
        },
      }, { timeoutMs: g.upstream_timeout_ms, pingMs: g.ws.ping_interval_ms, retryMs: g.ws.upstream_retry_ms });
      created = new SubscriptionHub(source, subscriptions);
      hub = created;
    }
    this.#hubs.set(env.id, hub);
    return hub;
  }

  /** Pause, allowlist changes and deleted endpoints reach open sockets within SWEEP_MS. */
  #enforce(): void {
    for (const conn of this.#conns) {
      const ep = conn.ep;
      const current = this.#d.registry.get(ep.uuid);
      if (current !== ep || !ep.env) conn.close(CLOSE.notFound);
      else if (ep.paused) conn.close(CLOSE.paused);
      else if (ep.allowlist.size > 0 && !ep.allowlist.allows(conn.ip)) conn.close(CLOSE.ipNotAllowed);
    }
  }

  /** Drops clients that did not answer the last ping. */
  #heartbeat(): void {
    for (const conn of this.#conns) {
      if (!conn.alive) {
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      conn.ws.ping();
    }
  }
}

function randomHex(): string {
  return crypto.getRandomValues(Buffer.alloc(16)).toString('hex');
}
