import { isIPv4, isIPv6 } from 'node:net';

/**
 * What an address is counted under: IPv4 as is (also when written IPv4-mapped, `::ffff:a.b.c.d`), IPv6 by its /64,
 * since one subscriber commonly holds a whole /64 and could otherwise rotate through 2^64 addresses.
 */
export function addressKey(ip: string): string {
  const bare = ip.split('%')[0]!;
  if (/^::ffff:/i.test(bare) && isIPv4(bare.slice(7))) return bare.slice(7);
  if (!isIPv6(bare)) return bare;
  const [head = '', tail] = bare.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  // An embedded IPv4 at the end stands for two groups; it is in the lower 64 bits anyway.
  const tailWidth = tailGroups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailWidth)).fill('0'), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
