import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { normalizeIp } from '../util/ip.js';

export class BlockedDestinationError extends Error {
  readonly code = 'E_BLOCKED_DESTINATION';
}

// Cloud metadata services: never a webhook receiver, so refused even when private URLs are allowed.
const metadata = new BlockList();
for (const ip of ['169.254.169.254', '169.254.170.2', '100.100.100.200']) metadata.addAddress(ip, 'ipv4');
metadata.addAddress('fd00:ec2::254', 'ipv6');

// Addresses no delivery can sensibly go to: unspecified, multicast, broadcast, reserved.
const unroutable = new BlockList();
unroutable.addSubnet('0.0.0.0', 8, 'ipv4');
unroutable.addSubnet('224.0.0.0', 4, 'ipv4');
unroutable.addSubnet('240.0.0.0', 4, 'ipv4');
unroutable.addAddress('::', 'ipv6');
unroutable.addSubnet('ff00::', 8, 'ipv6');

// Loopback, private, carrier-grade NAT, link-local, unique-local and special-purpose ranges.
const internal = new BlockList();
for (const [net, bits] of [
  ['127.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10],
  ['169.254.0.0', 16], ['192.0.0.0', 24], ['192.0.2.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
] as const) internal.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::1', 128], ['fc00::', 7], ['fe80::', 10], ['64:ff9b::', 96], ['2001:db8::', 32]] as const) internal.addSubnet(net, bits, 'ipv6');

/** Why a resolved address may not receive webhooks, or undefined when it may. */
export function blockedReason(address: string, allowPrivate: boolean): string | undefined {
  const ip = normalizeIp(address);
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (metadata.check(ip, type)) return `${ip} is a cloud metadata address`;
  if (unroutable.check(ip, type)) return `${ip} is not a routable unicast address`;
  if (!allowPrivate && internal.check(ip, type)) return `${ip} is a loopback, private or link-local address`;
  return undefined;
}

/** Resolves the URL's host and refuses it when any of its addresses is blocked. */
export async function checkWebhookUrl(url: URL, allowPrivate: boolean): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : await resolveAll(host);
  for (const a of addresses) {
    const reason = blockedReason(a, allowPrivate);
    if (reason) throw new BlockedDestinationError(`${url.hostname} resolves to ${reason}; webhooks go to public addresses only`);
  }
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (err, addrs) => {
      if (err) reject(new BlockedDestinationError(`${host} does not resolve (${err.code ?? err.message})`));
      else resolve(addrs.map((a) => a.address));
    });
  });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the delivery connections: the check happens on the addresses the socket
 * will connect to, so a DNS answer that changed since the PUT (rebinding) is caught too.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addrs) => {
      if (err) return callback(err, '', 0);
      for (const a of addrs) {
        const reason = blockedReason(a.address, allowPrivate);
        if (reason) return callback(Object.assign(new BlockedDestinationError(`refused: ${hostname} resolves to ${reason}`), { code: 'E_BLOCKED_DESTINATION' }), '', 0);
      }
      if (options.all) callback(null, addrs);
      else callback(null, addrs[0]!.address, addrs[0]!.family);
    });
  };
}
