import type { IncomingHttpHeaders } from 'node:http';
import { WebSocket } from 'ws';
import type { Environment } from '../../store/index.js';
import type { EndpointState } from '../registry.js';
import { networkLabels, type NetworkLabels } from '../metrics.js';
import type { SendQueues } from './queues.js';
import type { Feed, Subscriber } from './feed.js';

/** Close codes besides the standard ones (1001 going away, 1009 too big, 1011, 1013 try again later). */
export const CLOSE = {
  shuttingDown: [1001, 'server shutting down'],
  noUpstream: [1013, 'no upstream available'],
  notFound: [4001, 'endpoint not found'],
  paused: [4002, 'endpoint paused'],
  ipNotAllowed: [4003, 'ip address not allowed'],
  /** 1008 (policy violation): a client that does not read what it asked for. */
  tooSlow: [1008, 'client not reading: too many bytes queued'],
} as const satisfies Record<string, readonly [number, string]>;

export interface Call { jsonrpc?: unknown; id?: unknown; method: string; params?: unknown }

/** One client socket on one endpoint. */
export class Connection {
  readonly ws: WebSocket;
  readonly ep: EndpointState;
  readonly env: Environment;
  readonly ip: string;
  readonly network: string;
  readonly labels: NetworkLabels;
  readonly subs = new Map<string, { sub: Subscriber; feed: Feed }>();
  /** eth_subscribe calls waiting on their upstream: they count toward the per-socket limit too. */
  pendingSubs = 0;
  alive = true;
  closed = false;
  readonly opened = performance.now();
  calls = 0;
  notifications = 0;
  /** Messages being answered (MAX_CALLS_IN_FLIGHT). */
  inFlight = 0;
  /** Messages read while no new call may start, answered in order as that changes (server.ts #next). */
  readonly waiting: string[] = [];
  /** Told when written-out bytes may let a waiting message start (set by the server). */
  drained: () => void = () => {};
  /** The upgrade request's `traceparent` and `tracestate`: each call's span is their child (tracing on only). */
  traceParent: IncomingHttpHeaders | undefined = undefined;
  /** Bytes sent and not yet written to the kernel (SendQueues). */
  queued = 0;
  overCap = false;
  released = false;
  readonly queues: SendQueues<Connection>;
  constructor(ws: WebSocket, ep: EndpointState, env: Environment, ip: string, queues: SendQueues<Connection>) {
    this.ws = ws;
    this.ep = ep;
    this.env = env;
    this.ip = ip;
    this.network = `${env.network.slug}-${env.slug}`;
    this.labels = networkLabels(env);
    this.queues = queues;
  }
  /** Sends a frame, or closes the socket (1008) when its bytes would go over a cap. */
  send(text: string): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    const bytes = Buffer.byteLength(text);
    if (!this.queues.admit(this, bytes)) return;
    this.queues.add(this, bytes);
    this.ws.send(text, () => {
      this.queues.add(this, -bytes);
      if (this.waiting.length > 0) this.drained();
    });
  }
  close([code, reason]: readonly [number, string]): void {
    if (this.ws.readyState !== WebSocket.OPEN && this.ws.readyState !== WebSocket.CONNECTING) return;
    this.ws.close(code, reason);
    // Reads paused to hold calls back (server.ts) would never take the client's closing frame:
    // the socket, and the bytes queued on it, then waited out ws's 30 s close timeout.
    if (this.ws.isPaused) this.ws.resume();
  }
}
