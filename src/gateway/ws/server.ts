import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
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
import type { SubscriptionKind, WsProtocol } from '../../chains/gateway.js';
import type { GatewayMetrics } from '../metrics.js';
import type { EndpointLookup, EndpointState } from '../registry.js';
import type { UsageMeter } from '../meter.js';
import { rpsWindow } from '../http/context.js';
import { hostMatches } from '../http/route.js';
import { CLOSE, Connection, type Call } from './connection.js';
import { refuseUpgrade } from './refuse-upgrade.js';
import type { WindowLimiter } from '../../limits/index.js';
import { networkLabels, UNKNOWN_NETWORK } from '../metrics.js';
import { UpstreamError, type UpstreamDirectory } from '../upstreams/index.js';
import { batchHints, routeHints, type CallHandler } from '../calls.js';
import { invalidCallMessage, isCall, parseJson, type ParsedRpc } from '../jsonrpc.js';
import { SendQueues } from './queues.js';
import { FeedError, type Subscriber } from './feed.js';
import { SubscriptionHub } from './hub.js';
import { NoSource, PollSource, WsSource } from './sources.js';
import { jsonDeeperThan } from '../../util/json-depth.js';
import type { Tracing } from '../../telemetry/index.js';
import { traceCacheHit, tracedMessage, traceMethod, traceReply, type CallTrace } from '../trace.js';

/**
 * Messages of one socket being answered at once; past this its reads pause (TCP pushes back on
 * the client) so that the answers in flight, not yet queued, stay bounded too.
 */
export const MAX_CALLS_IN_FLIGHT = 16;
/**
 * No new call of a socket starts while this much of its answers wait to be written: a client
 * that does not read stops costing upstream answers (each several copies in memory on its way)
 * once the kernel's buffers are full, instead of only when its queue reaches its cap.
 */
export const HOLD_CALLS_OVER_QUEUED_BYTES = 1024 * 1024;
/** Whether a socket may start answering one more message now (see the two caps above). */
const mayStart = (conn: Connection): boolean => conn.inFlight < MAX_CALLS_IN_FLIGHT && conn.queued <= HOLD_CALLS_OVER_QUEUED_BYTES;

/** A paused endpoint or an allowlist change closes sockets within this long. */
const SWEEP_MS = 250;
/** Price of one notification where the network's `credits.methods` does not price its notification method. */
export const DEFAULT_NOTIFICATION_CREDITS = 10;

/** One notification's price: the network's price of its method (`eth_subscription`, `slotNotification`, ...). */
export function notificationPrice(network: Network, kind: SubscriptionKind): number {
  return Object.hasOwn(network.credits.methods, kind.notification) ? network.credits.methods[kind.notification]! : DEFAULT_NOTIFICATION_CREDITS;
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
  /** True once the service drains before it stops: new sockets are refused (503), open ones kept until the stop. */
  draining?: () => boolean;
  /** Each message a span, as each HTTP request (trace.ts); absent (tracing off): nothing traced. */
  tracing?: Tracing | undefined;
}

/**
 * `eth_subscribe` and every other JSON-RPC call over WebSocket on the endpoint URL. The upgrade
 * passes the same checks as an HTTP request (route, Host, pause, allowlist); calls count toward
 * the RPS window and usage like HTTP calls and are forwarded to the HTTP upstreams; the
 * subscriptions themselves are served by per-environment hubs (see hub.ts and sources.ts).
 */
export class WebSocketGateway {
  #d: WsGatewayDeps;
  readonly #wss: WebSocketServer;
  #trusted: IpAllowlist;
  readonly #prefix: string;
  readonly #conns = new Set<Connection>();
  readonly #perEndpoint = new Map<number, number>();
  readonly #hubs = new Map<number, SubscriptionHub>();
  readonly #wsUrls = new Map<string, string[]>();
  readonly #sweep: NodeJS.Timeout;
  readonly #ping: NodeJS.Timeout;
  readonly #takeRps: (ep: EndpointState, cost: number) => number | Promise<number>;
  readonly #queues: SendQueues<Connection>;
  #shutDown = false;

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

  /**
   * A config reload: calls and new subscriptions go to the new upstreams and policies; open
   * sockets and the subscriptions they hold stay as they are (their feeds keep their upstreams).
   * `config` is the same object, updated in place: limits read from it apply at once.
   */
  reconfigure(next: Pick<WsGatewayDeps, 'upstreams' | 'calls'>): void {
    this.#d = { ...this.#d, ...next };
    this.#trusted = new IpAllowlist(this.#d.config.gateway.trusted_proxies);
    this.#wsUrls.clear();
    for (const n of this.#d.config.networks) for (const e of n.environments) this.#wsUrls.set(`${n.slug}-${e.slug}`, e.ws_upstreams);
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
    this.#shutDown = true;
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
    // Draining or closed: a new socket would be closed (1001) moments later, or never told. A
    // balancer takes the 503 to another instance (nginx: proxy_next_upstream http_503).
    if (this.#shutDown || this.#d.draining?.()) return refuseUpgrade(socket, 503, 'upstreamFailed', 'the gateway is shutting down: connect again');
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
    if (traitsOf(env.network.family).gateway.websocket === undefined) {
      m.rejections.inc({ ...labels, reason: 'invalid_request', transport: 'ws' });
      return refuseUpgrade(socket, 400, 'invalidRequest', 'WebSocket is served for JSON-RPC networks only');
    }
    if (!this.#acquireSlot(ep)) {
      m.rejections.inc({ ...labels, reason: 'too_many_sockets', transport: 'ws' });
      return refuseUpgrade(socket, 429, 'rps', `too many WebSocket connections (at most ${this.#d.config.gateway.ws.max_sockets_per_endpoint} per endpoint)`);
    }
    const id = requestId(req);
    // The client's trace context: each call on the socket is a child of it (tracing on only).
    const parent: IncomingHttpHeaders | undefined = this.#d.tracing ? { traceparent: req.headers.traceparent, tracestate: req.headers.tracestate } : undefined;
    // ws drops a bad handshake, or a socket closed mid-upgrade, without calling back: the slot
    // held for it comes back when that socket closes, or a client could fill an endpoint's quota.
    let accepted = false;
    socket.once('close', () => { if (!accepted) this.#releaseSlot(ep); });
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      accepted = true;
      this.#accept(ws, ep, env, ip, id, parent);
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

  #accept(ws: WebSocket, ep: EndpointState, env: Environment, ip: string, id: string, parent: IncomingHttpHeaders | undefined): void {
    const conn = new Connection(ws, ep, env, ip, this.#queues);
    conn.traceParent = parent;
    this.#conns.add(conn);
    this.#queues.open(conn);
    this.#d.metrics.wsSockets.inc(conn.labels);
    ws.on('pong', () => { conn.alive = true; });
    ws.on('message', (data, isBinary) => {
      // Closing: nothing more is answered, and holding it back would pause the reads again.
      if (ws.readyState !== WebSocket.OPEN) return;
      const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : (data as Buffer).toString('utf8');
      // Pausing stops the socket's reads, but ws still emits what it had read: a burst of
      // hundreds of calls in one read arrives anyway. Those wait here, as text, not as answers.
      if (!mayStart(conn)) {
        conn.waiting.push(text);
        return void ws.pause();
      }
      this.#answer(conn, text);
    });
    conn.drained = () => this.#next(conn);
    ws.on('error', () => ws.terminate());
    ws.on('close', (code) => this.#closed(conn, code, id));
  }

  /** Answers one message; past MAX_CALLS_IN_FLIGHT the socket's reads pause until one is done. */
  #answer(conn: Connection, text: string): void {
    const ws = conn.ws;
    if (++conn.inFlight >= MAX_CALLS_IN_FLIGHT) ws.pause();
    const tracing = this.#d.tracing;
    const answered = tracing
      ? tracedMessage(tracing, conn.traceParent, conn.ep, conn.ep.env ?? conn.env, (t) => this.#onMessage(conn, text, t))
      : this.#onMessage(conn, text);
    answered.catch((err: unknown) => {
      this.#d.log(`gateway: websocket message failed: ${(err as Error)?.stack ?? String(err)}`);
      conn.close([1011, 'internal error']);
    }).finally(() => {
      conn.inFlight--;
      this.#next(conn);
    });
  }

  /** Starts what waits while the socket may take more; reads again once nothing waits. */
  #next(conn: Connection): void {
    const ws = conn.ws;
    if (conn.closed || ws.readyState !== WebSocket.OPEN) return void (conn.waiting.length = 0);
    while (conn.waiting.length > 0 && mayStart(conn)) this.#answer(conn, conn.waiting.shift()!);
    if (conn.waiting.length === 0 && mayStart(conn) && ws.isPaused) ws.resume();
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

  /** `t`: the message's trace (tracing on). */
  async #onMessage(conn: Connection, text: string, t?: CallTrace): Promise<void> {
    // Forwarding serialises the call again, which recurses: refused as the HTTP path refuses it.
    if (jsonDeeperThan(text)) return this.#reply(conn, ERROR_BODIES.tooDeep.toString(), t);
    let value: unknown;
    try {
      value = parseJson(text);
    } catch {
      return this.#reply(conn, ERROR_BODIES.parse.toString(), t);
    }
    const m = this.#d.metrics;
    if (!Array.isArray(value)) {
      if (!isCall(value)) {
        const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id ?? null : null;
        return this.#reply(conn, JSON.stringify(rpcError(-32600, invalidCallMessage(value), id)), t);
      }
      if (t) traceMethod(t, value.method);
      m.wsMessages.inc(conn.labels);
      conn.calls++;
      if (await this.#takeRps(conn.ep, 1) === 0) {
        m.rejections.inc({ ...conn.labels, reason: 'rps', transport: 'ws' });
        return this.#reply(conn, JSON.stringify(rpcError(-32005, 'rps limit exceeded', value.id ?? null)), t);
      }
      const local = await this.#local(conn, value);
      if (local !== undefined) return this.#reply(conn, JSON.stringify(local), t);
      return this.#reply(conn, await this.#forward(conn, [value], false, t), t);
    }
    if (t) traceMethod(t, value.find(isCall)?.method ?? '', value.length);
    if (value.length === 0) return this.#reply(conn, ERROR_BODIES.invalidRequest.toString(), t);
    if (value.length > this.#d.config.gateway.max_batch) return this.#reply(conn, ERROR_BODIES.batchTooLarge.toString(), t);
    const calls = value.filter(isCall);
    const rejected = value.filter((v) => !isCall(v)).map((v) => rpcError(-32600, invalidCallMessage(v), typeof v === 'object' && v !== null ? (v as { id?: unknown }).id ?? null : null));
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
      const text = await this.#forward(conn, remote, true, t);
      try {
        const got = parseJson(text);
        if (Array.isArray(got)) answers.push(...got);
        else answers.push(got);
      } catch {
        answers.push(...remote.map((c) => rpcError(-32010, 'upstream failed', c.id ?? null)));
      }
    }
    this.#reply(conn, JSON.stringify(answers), t);
  }

  /** Sends a message's answer; a traced call's span learns its error code (trace.ts). */
  #reply(conn: Connection, text: string, t?: CallTrace): void {
    if (t) traceReply(t, text);
    conn.send(text);
  }

  /** Answers the calls the gateway serves itself (the family's subscribe and unsubscribe calls); undefined for the rest. */
  async #local(conn: Connection, call: Call): Promise<unknown> {
    const protocol = traitsOf(conn.env.network.family).gateway.websocket;
    if (!protocol) return undefined;
    for (const kind of protocol.kinds) {
      if (call.method === kind.subscribe) return this.#subscribe(conn, protocol, kind, call);
      if (call.method === kind.unsubscribe) return this.#unsubscribe(conn, kind, call);
    }
    return undefined;
  }

  async #subscribe(conn: Connection, protocol: WsProtocol, kind: SubscriptionKind, call: Call): Promise<unknown> {
    const id = call.id ?? null;
    if (conn.subs.size + conn.pendingSubs >= this.#d.config.gateway.ws.max_subscriptions_per_socket) {
      return rpcError(-32005, `subscription limit reached (${this.#d.config.gateway.ws.max_subscriptions_per_socket} per socket)`, id);
    }
    const subId = protocol.newId();
    const key = String(subId);
    const network = conn.env.network;
    const price = notificationPrice(network, kind);
    const meter = this.#d.meter;
    const notifications = this.#d.metrics.wsNotifications.labels(conn.labels);
    const head = `{"jsonrpc":"2.0","method":"${kind.notification}","params":{"subscription":${JSON.stringify(subId)},"result":`;
    const sub: Subscriber = {
      id: key,
      deliver: (json) => {
        if (conn.closed || conn.ws.readyState !== WebSocket.OPEN) return;
        conn.send(`${head}${json}}}`);
        if (conn.ws.readyState !== WebSocket.OPEN) return;
        notifications.inc();
        conn.notifications++;
        meter.record(conn.ep.id, conn.ep.accountId, kind.notification, price);
      },
      lost: () => conn.close(CLOSE.noUpstream),
    };
    conn.pendingSubs++;
    try {
      // The endpoint's environment as the last config reload left it.
      // The feed outlives this call: its polls are none of this call's span (the call's trace is not passed on).
      const feed = await this.#hub(conn.ep.env ?? conn.env).subscribe(sub, kind, call.params);
      if (conn.closed) {
        this.#hub(conn.env).unsubscribe(sub, feed);
        return undefined;
      }
      conn.subs.set(key, { sub, feed });
      this.#d.onSubscriptions?.();
    } catch (err) {
      if (err instanceof FeedError) return rpcError(err.rpcCode, err.message, id);
      throw err;
    } finally {
      conn.pendingSubs--;
    }
    this.#meterCall(conn, kind.subscribe);
    return { jsonrpc: '2.0', id, result: subId };
  }

  #unsubscribe(conn: Connection, kind: SubscriptionKind, call: Call): unknown {
    const subId = Array.isArray(call.params) ? call.params[0] : undefined;
    const key = typeof subId === 'string' || typeof subId === 'number' ? String(subId) : undefined;
    const entry = key === undefined ? undefined : conn.subs.get(key);
    // Only the unsubscribe call of the subscription's own kind ends it.
    const found = entry !== undefined && entry.feed.kind.unsubscribe === kind.unsubscribe;
    if (found) {
      conn.subs.delete(key!);
      this.#d.onSubscriptions?.();
      this.#hub(conn.env).unsubscribe(entry.sub, entry.feed);
    }
    this.#meterCall(conn, kind.unsubscribe);
    return { jsonrpc: '2.0', id: call.id ?? null, result: found };
  }

  /**
   * Sends calls to the environment's HTTP upstreams; meters them when the upstream answered 2xx.
   * The same guards as over HTTP apply first (calls.ts): cache hits are answered (and metered)
   * here, and an `eth_getLogs` over the range limit is refused, split or capped.
   */
  async #forward(conn: Connection, calls: Call[], batch: boolean, t: CallTrace | undefined): Promise<string> {
    const env = conn.ep.env ?? conn.env;
    const handler = this.#d.calls;
    const units = (c: Call) => handler?.units(env, c) ?? 1;
    let refused: unknown[] = [];
    try {
      if (handler && !batch) {
        const body = Buffer.from(JSON.stringify(calls[0]));
        const answer = await handler.single(env, calls[0]!, body, t);
        if (answer) {
          if (answer.cached) traceCacheHit(t);
          if (answer.metered) this.#meterCall(conn, calls[0]!.method, answer.units);
          return answer.body.toString('utf8');
        }
      } else if (handler) {
        const parsed: Extract<ParsedRpc, { kind: 'batch' }> = {
          kind: 'batch', valid: [...calls], calls: calls.map((c) => ({ method: c.method, params: c.params, id: c.id })), rejected: [],
        };
        handler.screenBatch(env, parsed);
        if (parsed.valid.length === 0) return JSON.stringify(parsed.rejected);
        const answer = await handler.batch(env, parsed, t);
        if (answer) {
          if (answer.hits === parsed.calls.length) traceCacheHit(t);
          for (const c of answer.meteredCalls) this.#meterCall(conn, c.method, units(c));
          return answer.body.toString('utf8');
        }
        calls = parsed.valid as Call[];
        refused = parsed.rejected;
      }
      const res = await this.#d.upstreams.for(env.id, env.upstreams).send({
        method: 'POST', path: '', contentType: 'application/json', rpcMethod: batch ? '' : calls[0]!.method,
        body: Buffer.from(JSON.stringify(batch ? calls : calls[0])), trace: t,
      }, batch ? batchHints(traitsOf(env.network.family).gateway.methods, calls) : routeHints(env.network.family, calls[0]!));
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
    // Upgrades are refused for families without one: a socket of this environment has it.
    const protocol = traitsOf(env.network.family).gateway.websocket!;
    const polling = protocol.polling;
    if (urls.length === 0) {
      hub = new SubscriptionHub(polling ? new PollSource(http, polling, g.ws.poll_interval_ms) : new NoSource(), protocol, subscriptions);
    } else {
      let created: SubscriptionHub | undefined = undefined;
      const poll = env.upstreams.length > 0 && polling ? new PollSource(http, polling, g.ws.poll_interval_ms) : undefined;
      const source = new WsSource(urls, http, protocol, poll, {
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
      created = new SubscriptionHub(source, protocol, subscriptions);
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

