import type { EndpointState } from '../registry.js';

/**
 * Whether the endpoint takes calls from `ip` at all (both refusals are 403); the RPS window is
 * taken later, by each kind of call for its own cost (context.ts `takeRps`).
 */
export function closedTo(ep: EndpointState, ip: string): 'paused' | 'ipNotAllowed' | undefined {
  if (ep.paused) return 'paused';
  if (ep.allowlist.size > 0 && !ep.allowlist.allows(ip)) return 'ipNotAllowed';
  return undefined;
}
