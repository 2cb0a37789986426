import { isIP } from 'node:net';

/** An IP address as a number, so ranges are a shift and a compare. */
export interface IpAddress {
  readonly family: 4 | 6;
  /** Unsigned: 32 bits for IPv4, 128 for IPv6. */
  readonly value: bigint;
  /** Canonical text: a dotted quad, or IPv6 compressed in lower case as WHATWG URL writes it (`::ffff:a9fe:a9fe`). */
  readonly text: string;
}

/** A CIDR range, its host bits cleared. */
export interface Cidr {
  readonly family: 4 | 6;
  readonly value: bigint;
  readonly prefix: number;
  /** `169.254.0.0/16`. */
  readonly text: string;
}

const BITS = { 4: 32, 6: 128 } as const;
// Characters of an IPv4 address in any spelling WHATWG URL parsing takes: decimal, octal (0177), hex (0x7f), and
// fewer than four parts (127.1, 2130706433). Anything else is a name, never an address.
const IPV4_SPELLING = /^[0-9a-fA-FxX.]+$/;

/**
 * The address `text` names, in any spelling a URL host or a resolver may give it: `0x7f000001`, `2130706433`,
 * `127.1` and `0177.0.0.1` are 127.0.0.1 (as WHATWG URL parsing, and so undici, reads them); `[::ffff:1.2.3.4]`
 * loses its brackets and is written in hex; an IPv6 zone (`fe80::1%eth0`) is dropped (the range does not depend
 * on it). Undefined when `text` is not an address (a host name).
 *
 * WHATWG URL parsing does the normalising, so this reads addresses exactly as the sender's URLs are read.
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  let candidate = text.trim();
  if (candidate.startsWith('[') && candidate.endsWith(']')) candidate = candidate.slice(1, -1);
  if (candidate.includes(':')) {
    const zone = candidate.indexOf('%');
    if (zone !== -1) candidate = candidate.slice(0, zone);
    if (isIP(candidate) !== 6) return undefined;
    const canonical = new URL(`http://[${candidate}]/`).hostname.slice(1, -1);
    return { family: 6, value: ipv6Value(canonical), text: canonical };
  }
  if (!IPV4_SPELLING.test(candidate)) return undefined;
  let host: string;
  try {
    host = new URL(`http://${candidate}/`).hostname;
  } catch {
    return undefined; // `09`, `1.2.3.4.5`, `256.0.0.1`: not addresses, and no URL could name them either
  }
  if (isIP(host) !== 4) return undefined; // `abc`, `dead.beef`: host names made of hex letters
  return { family: 4, value: ipv4Value(host), text: host };
}

/**
 * A CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address (`/32` or `/128`), written as addresses usually are
 * (no hex or short IPv4 forms: a setting should read the way it works). Host bits are cleared
 * (`10.1.2.3/8` is `10.0.0.0/8`). An IPv4-mapped range (`::ffff:10.0.0.0/104`) becomes its IPv4 range, since a
 * mapped address is judged as the IPv4 address it carries. Undefined when `entry` is neither.
 */
export function parseCidr(entry: string): Cidr | undefined {
  const slash = entry.indexOf('/');
  const addressText = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(addressText);
  if (family === 0) return undefined;
  const bits = BITS[family as 4 | 6];
  let prefix: number = bits;
  if (slash !== -1) {
    const prefixText = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return undefined;
    prefix = Number(prefixText);
  }
  const address = parseIpAddress(addressText)!;
  if (address.family === 6 && prefix >= 96 && address.value >> 32n === MAPPED_PREFIX) {
    return cidrOf(4, address.value & 0xffff_ffffn, prefix - 96);
  }
  return cidrOf(address.family, address.value, prefix);
}

export function cidrOf(family: 4 | 6, value: bigint, prefix: number): Cidr {
  const shift = BigInt(BITS[family] - prefix);
  const network = (value >> shift) << shift;
  return { family, value: network, prefix, text: `${formatAddress(family, network)}/${prefix}` };
}

export function cidrContains(cidr: Cidr, address: IpAddress): boolean {
  if (cidr.family !== address.family) return false;
  const shift = BigInt(BITS[cidr.family] - cidr.prefix);
  return address.value >> shift === cidr.value >> shift;
}

/** `::ffff:0:0/96`, shifted right by 32. */
const MAPPED_PREFIX = 0xffffn;

/**
 * The IPv6 ranges whose addresses carry an IPv4 address in their last 32 bits, and reach it: a dual-stack socket
 * connects to `::ffff:a.b.c.d` as to `a.b.c.d`, and a NAT64 gateway forwards `64:ff9b::a.b.c.d` to it. The deprecated
 * IPv4-compatible `::a.b.c.d` is read the same way, to be safe whatever the stack does with it.
 */
const CARRIERS: readonly { cidr: Cidr; name: string }[] = [
  { cidr: cidrOf(6, 0xffffn << 32n, 96), name: 'IPv4-mapped' },
  { cidr: cidrOf(6, 0xffffn << 48n, 96), name: 'IPv4-translated' },
  { cidr: cidrOf(6, 0x64ff9bn << 96n, 96), name: 'NAT64' },
  { cidr: cidrOf(6, 0n, 96), name: 'IPv4-compatible' },
];

/**
 * The IPv4 address an IPv6 address carries (see CARRIERS), or undefined. `::` and `::1` carry none: they are
 * the IPv6 unspecified and loopback addresses, not 0.0.0.0 and 0.0.0.1.
 */
export function embeddedIPv4(address: IpAddress): IpAddress | undefined {
  if (address.family !== 6 || address.value <= 1n) return undefined;
  if (!CARRIERS.some(({ cidr }) => cidrContains(cidr, address))) return undefined;
  const value = address.value & 0xffff_ffffn;
  return { family: 4, value, text: formatAddress(4, value) };
}

function ipv4Value(dotted: string): bigint {
  return dotted.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

/** `text` is IPv6 as WHATWG URL serialises it: hex groups, at most one `::`, no dotted IPv4 tail. */
function ipv6Value(text: string): bigint {
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function formatAddress(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => ((value >> shift) & 0xffffn).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
