import type { ExampleCall } from '../../chains/family.js';
import { traitsOf } from '../../chains/traits.js';
import { envIdentifier, type Catalog } from '../../store/index.js';

/** Address Watch identifiers (`eth`, `eth-sepolia`) with readable labels, in catalog order. */
export function watchNetworks(catalog: Catalog): Array<{ id: string; label: string; family: string }> {
  return catalog.networks.flatMap((n) => n.environments.map((e) => ({ id: envIdentifier(e), label: `${n.name} ${e.slug}`, family: n.family })));
}

/**
 * The example call of an endpoint's network family (`getSlot` on Solana, `eth_blockNumber` on
 * EVM): the Public API's endpoint does not carry its family, the catalog does. Undefined for a
 * network the catalog no longer has.
 */
export function exampleCall(catalog: Catalog, networkId: number): ExampleCall | undefined {
  const network = catalog.network(networkId);
  return network ? traitsOf(network.family).example : undefined;
}

/** The call as the request log names it: the JSON-RPC method, or `VERB /path` on a REST network. */
export function exampleMethod(call: ExampleCall): string {
  return call.transport === 'rpc' ? call.method : `${call.verb} ${call.path}`;
}

/** A curl command line that makes the call on the endpoint at `url` (shell-quoted; escape it for HTML). */
export function exampleCurl(call: ExampleCall, url: string): string {
  if (call.transport === 'rpc') {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params });
    return `curl -s -X POST -H 'content-type: application/json' \\\n  --data '${body}' \\\n  ${url}`;
  }
  const target = `'${url.replace(/\/$/, '')}${call.path}${call.query ?? ''}'`;
  if (call.verb === 'GET') return `curl -s ${target}`;
  return call.body === undefined ? `curl -s -X POST ${target}`
    : `curl -s -X POST -H 'content-type: application/json' \\\n  --data '${call.body}' \\\n  ${target}`;
}
