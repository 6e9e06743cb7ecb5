import { BlockList, isIP, isIPv4 } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** `::ffff:1.2.3.4` is the IPv4 client seen through a dual-stack socket: treat it as `1.2.3.4`. */
export function normalizeIp(ip: string): string {
  if (ip.length > 7 && ip.charCodeAt(0) === 58 /* : */ && ip.startsWith('::ffff:') && isIPv4(ip.slice(7))) return ip.slice(7);
  return ip;
}

/** A client address as the allowlists take it: IPv4 or IPv6, no zone id (`%eth0`), no range. */
export function isValidIp(value: string): boolean {
  return value.length <= 45 && !value.includes('%') && isIP(value) !== 0;
}

/**
 * The eight 16-bit groups of an IPv6 address, however it is written (`::` shorthand, leading
 * zeros, a dotted IPv4 tail, a zone id); undefined for anything that is not IPv6.
 */
export function ipv6Groups(ip: string): number[] | undefined {
  if (isIP(ip) !== 6) return undefined;
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (isIPv4(tail)) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => parseInt(g, 16));
}

/**
 * The key a per-address limit counts under. One IPv6 client usually holds a whole /64, so
 * IPv6 addresses count by their /64; IPv4 by the address.
 */
export function rateLimitKey(ip: string): string {
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/**
 * An allowlist of single addresses; IPv4-mapped IPv6 entries and clients both match their
 * IPv4 form, and IPv6 matches whatever way the address is written.
 */
export class IpAllowlist {
  readonly size: number;
  readonly #list = new BlockList();

  constructor(entries: readonly string[]) {
    let size = 0;
    for (const raw of entries) {
      const ip = normalizeIp(raw.trim());
      const family = isIP(ip);
      if (family === 0) continue;
      this.#list.addAddress(ip, family === 4 ? 'ipv4' : 'ipv6');
      size++;
    }
    this.size = size;
  }

  /** An empty list allows everyone. */
  allows(clientIp: string): boolean {
    if (this.size === 0) return true;
    const ip = normalizeIp(clientIp);
    const family = isIP(ip);
    if (family === 0) return false;
    return this.#list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/**
 * The client address: the socket's, unless the socket is a trusted proxy, in which case the
 * right-most X-Forwarded-For hop that is not itself a trusted proxy.
 */
export function clientIp(req: IncomingMessage, trusted: IpAllowlist | undefined): string {
  const socketIp = normalizeIp(req.socket.remoteAddress ?? '');
  if (!trusted || trusted.size === 0 || !trusted.allows(socketIp)) return socketIp;
  const header = req.headers['x-forwarded-for'];
  if (!header) return socketIp;
  const hops = (Array.isArray(header) ? header.join(',') : header).split(',').map((h) => normalizeIp(h.trim())).filter((h) => isIP(h) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trusted.allows(hops[i]!)) return hops[i]!;
  }
  return hops[0] ?? socketIp;
}
