import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { parseConfig, type Config } from '../../src/config/index.js';
import type { NetworkFamily } from '../../src/chains/family.js';
import { gatewayContext, type GatewayContext, type GatewayDeps } from '../../src/gateway/http/context.js';
import type { EndpointState } from '../../src/gateway/registry.js';
import type { RouteHints, UpstreamDirectory, UpstreamRequest, UpstreamResponse } from '../../src/gateway/upstreams/index.js';
import type { Environment, Network } from '../../src/store/index.js';
import { IpAllowlist } from '../../src/util/ip.js';

/**
 * What the gateway's request steps (src/gateway/http/*) run on, without a server: a context
 * built by the real `gatewayContext`, endpoints in a map, an upstream that answers what the test
 * says, a request that is a stream with headers, a response that keeps what was written.
 */

/** A network of `family` with one environment (id 1) and the given credit table. */
export function stepEnvironment(family: NetworkFamily = 'evm', credits: Network['credits'] = { default: 20, methods: { eth_getBalance: 5 } }): Environment {
  const network: Network = { id: 1, uuid: randomUUID(), slug: family === 'evm' ? 'eth' : family, name: family, family, sort: 0, credits, environments: [] };
  const env: Environment = { id: 1, slug: 'main', network, upstreams: ['http://127.0.0.1:1/'], confirmations: 1, finalityDepth: 0 };
  network.environments.push(env);
  return env;
}

export function stepEndpoint(over: Partial<EndpointState> & { allowedIps?: string[]; family?: NetworkFamily } = {}): EndpointState {
  const { allowedIps, family, ...rest } = over;
  const env = rest.env === undefined && 'env' in over ? undefined : rest.env ?? stepEnvironment(family);
  return {
    id: 7, uuid: randomUUID(), accountId: 3, paused: false, allowlist: new IpAllowlist(allowedIps ?? []),
    hostLabel: `rpc-${env?.network.slug ?? 'gone'}-main`, rpsLimit: 10, slot: 0, envId: 1, ...rest, env,
  };
}

export interface Metered { endpointId: number; accountId: number; method: string; credits: number }

export interface StepWorld {
  cx: GatewayContext;
  /** What reached the meter. */
  metered: Metered[];
  /** What was sent upstream, with its hints. */
  sent: Array<{ req: UpstreamRequest; hints: RouteHints | undefined }>;
}

export interface StepOptions {
  endpoints?: EndpointState[];
  gateway?: Record<string, unknown>;
  /** The upstream's answer to each send (default: 200 `{"jsonrpc":"2.0","id":1,"result":"0x1"}`); throw an UpstreamError to fail. */
  upstream?: (req: UpstreamRequest, hints: RouteHints | undefined) => UpstreamResponse | Promise<UpstreamResponse>;
  /** The RPS window: how many of `cost` it admits (default: all). */
  rps?: (ep: EndpointState, cost: number) => number;
  deps?: Partial<GatewayDeps>;
}

export function stepWorld(o: StepOptions = {}): StepWorld {
  const config: Config = parseConfig({ gateway: o.gateway ?? {} });
  const byUuid = new Map((o.endpoints ?? []).map((e) => [e.uuid, e]));
  const metered: Metered[] = [];
  const sent: StepWorld['sent'] = [];
  const answer = o.upstream ?? (() => upstreamAnswer(200, '{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
  const upstreams = {
    for: () => ({
      send: async (req: UpstreamRequest, hints?: RouteHints) => {
        sent.push({ req, hints });
        return answer(req, hints);
      },
    }),
  } as unknown as UpstreamDirectory;
  const cx = gatewayContext({
    config, registry: { get: (uuid) => byUuid.get(uuid) }, upstreams, log: () => {},
    meter: { record: (endpointId, accountId, method, credits) => void metered.push({ endpointId, accountId, method, credits }) },
    localRps: o.rps ?? ((_ep, cost) => cost),
    ...o.deps,
  });
  return { cx, metered, sent };
}

/** An upstream answer the relay passes on whole. */
export function upstreamAnswer(status: number, body: string, contentType = 'application/json'): UpstreamResponse {
  const buf = Buffer.from(body);
  // As undici's body: a stream that can also be read whole.
  const stream = Object.assign(Readable.from([buf]), { text: async () => body, json: async () => JSON.parse(body) as unknown });
  return {
    status, contentType, contentLength: buf.length, body: stream as never, upstream: { url: 'http://up.example' } as never,
    rpcCode: undefined, whole: (done) => { done(undefined, buf); return true; }, cancel: () => {},
  };
}

export interface StepRequestInit {
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  /** Sent in one chunk with its Content-Length (unless `chunked`). */
  body?: string | Buffer;
  chunked?: boolean;
  /** Never ends: a client that stalls mid-body. */
  stall?: boolean;
  ip?: string;
}

/** A request as the steps read it: a stream with method, URL, headers and a socket address. */
export function stepRequest(init: StepRequestInit = {}): IncomingMessage {
  const body = init.body === undefined ? undefined : Buffer.from(init.body);
  const headers: Record<string, string> = { host: '127.0.0.1:8545', ...init.headers };
  if (body && !init.chunked) headers['content-length'] ??= String(body.length);
  if (init.chunked || init.stall) headers['transfer-encoding'] = 'chunked';
  const stream = init.stall ? new Readable({ read() {} }) : Readable.from(body ? [body] : []);
  if (init.stall && body) stream.push(body);
  const rawHeaders = Object.entries(headers).flat();
  return Object.assign(stream, {
    method: init.method ?? 'POST', url: init.url ?? '/', headers, rawHeaders,
    socket: { remoteAddress: init.ip ?? '203.0.113.9' },
  }) as unknown as IncomingMessage;
}

/** A response that keeps its status, headers and body; `done` settles when it ended. */
export class StepResponse extends Writable {
  status = 0;
  headers: Record<string, string | number | readonly string[]> = {};
  headersSent = false;
  readonly #chunks: Buffer[] = [];
  readonly done = new Promise<void>((r) => this.once('finish', () => r()));

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.#chunks.push(Buffer.from(chunk));
    cb();
  }

  writeHead(status: number, headers?: Record<string, string | number | readonly string[]>): this {
    this.status = status;
    Object.assign(this.headers, headers ?? {});
    this.headersSent = true;
    return this;
  }

  get text(): string { return Buffer.concat(this.#chunks).toString('utf8'); }
  get json(): any { return JSON.parse(this.text); }
  get res(): ServerResponse { return this as unknown as ServerResponse; }
}
