import type { AddressResolver } from '../../src/network/guarded-connector.js';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1)$/;

/**
 * A resolver that answers fixed addresses for one name (any other name: ENOTFOUND, as getaddrinfo says it), and
 * counts its calls. Loopback addresses only: a guard that failed to refuse would still reach nothing but this machine.
 */
export function fixedResolver(name: string, addresses: string[]): AddressResolver & { calls: number } {
  const outside = addresses.filter((address) => !LOOPBACK.test(address));
  if (outside.length > 0) throw new Error(`a test resolver answers loopback addresses only, not ${outside.join(', ')}`);
  const resolver = Object.assign(
    async (hostname: string) => {
      resolver.calls++;
      if (hostname !== name) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
    { calls: 0 },
  );
  return resolver;
}
