import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ipv6Groups, normalizeIp } from '../util/ip.js';
import { RpcctlError } from '../util/errors.js';

export class BlockedDestinationError extends RpcctlError {
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

/**
 * Special-purpose ranges come from ipaddr.js, which follows the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (Teredo, discard, benchmarking, documentation, AS112,
 * ORCHID, the 6to4 relay anycast...). These of its range names are internal networks, which
 * `allow_private_urls` opens for local development; every other name but `unicast` is refused.
 */
/** What an address `allow_private_urls` (serve --dev) opens is called in a refusal. */
const INTERNAL = 'a loopback, private or link-local address';
const INTERNAL_RANGES = new Set(['loopback', 'private', 'linkLocal', 'carrierGradeNat', 'uniqueLocal', 'deprecatedSiteLocal']);

/** IANA allocates global unicast IPv6 only from 2000::/3; ipaddr.js calls the rest of the space `unicast` too. */
const globalUnicastV6 = new BlockList();
globalUnicastV6.addSubnet('2000::', 3, 'ipv6');

function specialRange(ip: string, family: 4 | 6): string {
  const range = ipaddr.parse(ip).range();
  if (range === 'unicast' && family === 6 && !globalUnicastV6.check(ip, 'ipv6')) return 'reserved';
  return range;
}

/**
 * The IPv4 address an IPv6 address carries in its last 32 bits (or bits 16..47 for 6to4),
 * when the prefix makes the network deliver it to that IPv4 host: `::/96` (IPv4-compatible,
 * except `::` and `::1`), `::ffff:0:0/96` (mapped, however written), `::ffff:0:0:0/96`
 * (SIIT-translated), `64:ff9b::/96` (NAT64) and `2002::/16` (6to4). Without this,
 * `[64:ff9b::a9fe:a9fe]` would reach 169.254.169.254 while looking like a public IPv6 address.
 */
function embeddedIpv4(ip: string): string | undefined {
  const g = ipv6Groups(ip);
  if (!g) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const compatible = zeroUpTo(6) && (g[6] !== 0 || g[7]! > 1);
  const mapped = zeroUpTo(5) && g[5] === 0xffff;
  const translated = zeroUpTo(4) && g[4] === 0xffff && g[5] === 0;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  return compatible || mapped || translated || nat64 ? v4(g[6]!, g[7]!) : undefined;
}

function isNat64(ip: string): boolean {
  const g = ipv6Groups(ip);
  return g !== undefined && g[0] === 0x64 && g[1] === 0xff9b;
}

/** Why a resolved address may not receive webhooks, or undefined when it may. */
export function blockedReason(address: string, allowPrivate: boolean): string | undefined {
  const ip = normalizeIp(address);
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (metadata.check(ip, type)) return `${ip} is a cloud metadata address`;
  if (unroutable.check(ip, type)) return `${ip} is not a routable unicast address`;
  if (family === 6) {
    // Judged as the IPv4 host it reaches; NAT64 is an internal translator besides.
    const v4 = embeddedIpv4(ip);
    if (v4 !== undefined) {
      const reason = blockedReason(v4, allowPrivate);
      if (reason) return `${ip} (${reason})`;
      if (!allowPrivate && isNat64(ip)) return `${ip} is ${INTERNAL} (NAT64)`;
      return undefined;
    }
  }
  const range = specialRange(ip, family as 4 | 6);
  if (range === 'unicast') return undefined;
  if (INTERNAL_RANGES.has(range)) return allowPrivate ? undefined : `${ip} is ${INTERNAL}`;
  return `${ip} is in a special-purpose range (${range}, IANA registry) and not a routable unicast address`;
}

/** Control characters (CR, LF, TAB...) in a URL: WHATWG parsing drops some silently, so we refuse them. */
export function hasControlChars(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Resolves the URL's host and refuses it when any of its addresses is blocked. */
export async function checkWebhookUrl(url: URL, allowPrivate: boolean): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : await resolveAll(host);
  for (const a of addresses) {
    const reason = blockedReason(a, allowPrivate);
    if (!reason) continue;
    // An IP literal needs no "resolves to"; an internal address says how to allow it, since a
    // developer meets this with a local receiver (the operator's switch, never the merchant's).
    const what = a === host ? reason : `${url.hostname} resolves to ${reason}`;
    const allow = reason.includes(INTERNAL)
      ? 'webhooks to loopback/private addresses are allowed only when the service runs with --dev (webhooks.allow_private_urls)'
      : 'webhooks go to public addresses only';
    throw new BlockedDestinationError(`${what}; ${allow}`);
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
