import type { Config } from '../config/index.js';
import { RpcctlError } from '../util/errors.js';

/** What `rpcctl serve` flags change on top of the config file. */
export interface ServeOverrides {
  /** Address both the Public API and the gateway listen on. */
  host?: string;
  apiPort?: number;
  gatewayPort?: number;
  /**
   * Local development: webhooks may go to loopback and private addresses (so `webhook listen`
   * on this machine can receive them), and the checkout page's `redirect_url` may be http.
   * Never the default.
   */
  dev?: boolean;
  /**
   * `--upstream eth-mainnet=URL`: the nodes of a network environment (`network-env` slugs),
   * instead of the config's (the built-in public ones): your own node, an anvil on loopback.
   */
  upstreams?: Record<string, string[]>;
}

/** A `--upstream` for a network environment the config does not have. */
export class UnknownUpstreamTargetError extends RpcctlError {
  readonly code = 'E_CONFIG';
  constructor(target: string, known: string[]) {
    super(`--upstream ${target}=...: no network environment "${target}" (one of: ${known.join(', ')})`);
  }
}

/** The config with the flags applied; the input is left as it was. */
export function applyOverrides(config: Config, o: ServeOverrides): Config {
  const api = { ...config.api, ...(o.host !== undefined && { host: o.host }), ...(o.apiPort !== undefined && { port: o.apiPort }) };
  const gateway = { ...config.gateway, ...(o.host !== undefined && { host: o.host }), ...(o.gatewayPort !== undefined && { port: o.gatewayPort }) };
  const webhooks = o.dev ? { ...config.webhooks, allow_private_urls: true } : config.webhooks;
  // And the checkout page may send customers back to http://localhost.
  const payments = o.dev ? { ...config.payments, checkout: { ...config.payments.checkout, allow_any_redirect: true } } : config.payments;
  const known = config.networks.flatMap((n) => n.environments.map((e) => `${n.slug}-${e.slug}`));
  for (const target of Object.keys(o.upstreams ?? {})) if (!known.includes(target)) throw new UnknownUpstreamTargetError(target, known);
  const networks = o.upstreams === undefined ? config.networks : config.networks.map((n) => ({
    ...n, environments: n.environments.map((e) => {
      const urls = o.upstreams![`${n.slug}-${e.slug}`];
      return urls ? { ...e, upstreams: urls } : e;
    }),
  }));
  return { ...config, api, gateway: { ...gateway, rpc_domain: followGatewayPort(config.gateway, gateway.port) }, webhooks, payments, networks };
}

/**
 * Endpoint URLs name the gateway's port through `rpc_domain` (`localhost:8545` by default).
 * When that domain is the gateway itself (the default, or `localhost:` the configured port)
 * and the gateway is told to listen on another port (`--gateway-port`, or `gateway.port`
 * without `rpc_domain`), the URLs handed out would not reach it: follow that port. A domain
 * pointing anywhere else (a proxy) is left alone.
 */
function followGatewayPort(configured: Config['gateway'], port: number): string {
  const domain = configured.rpc_domain;
  const isGatewayItself = domain === 'localhost:8545' || domain === `localhost:${configured.port}`;
  // Port 0 (a free port at each start, as tests use) has no URL to follow.
  return isGatewayItself && port !== 0 ? `localhost:${port}` : domain;
}
