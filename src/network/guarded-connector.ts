import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { ReceiverBlockedError } from './receiver-blocked.js';
import type { ReceiverPolicy } from './receiver-policy.js';

/** Every address a host name has, as dns.lookup with `all: true` gives them. `family` 0 means both. */
export type AddressResolver = (hostname: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;

export const resolveWithDns: AddressResolver = (hostname, family) => dns.lookup(hostname, { all: true, family });

export interface GuardedConnectorOptions {
  policy: ReceiverPolicy;
  /**
   * Connect time-out in ms (undici's default 10 s when unset). A Pool's `connectTimeout` only reaches the connector
   * it builds itself, not one it is given, so it is given here.
   */
  timeout?: number;
  /** Certificates to trust (replacing the bundled roots, as Node's `ca` does). */
  ca?: string[];
  /** Where host names are resolved; dns.lookup unless a test maps a name of its own. */
  resolve?: AddressResolver;
}

/**
 * An undici `connect` function (for `new Pool(origin, { connect })`) that lets a connection reach only what the
 * receiver policy allows, checked where the connection is made:
 *
 * - an IP literal host is checked as it is, and refused before any socket is opened;
 * - a host name is resolved once, here, every address it has is checked, and the socket is given only the allowed
 *   ones to connect to: the connection goes to an address that was checked, never to a second resolution's answer
 *   (so a name that answers a harmless address to a check and 169.254.169.254 to the connection, DNS rebinding,
 *   gets nowhere). When none is allowed the connection fails with ReceiverBlockedError naming the first refused one.
 *
 * The resolution is a `lookup` function handed to net/tls.connect rather than connecting to an address ourselves:
 * Node keeps the host name for TLS (SNI and the certificate are checked against the name, not the address) and
 * still tries the allowed addresses in turn (happy eyeballs), as it does for undici's own connector.
 */
export function guardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const { policy } = options;
  const connect = buildConnector({
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    ...(options.ca === undefined ? {} : { ca: options.ca }),
    lookup: guardedLookup(policy, options.resolve ?? resolveWithDns),
  });
  return (target, callback) => {
    // undici gives IPv6 literals without their brackets; net.connect skips `lookup` for any literal, so it is checked
    // here. (URL parsing has already written 0x7f000001 or 127.1 as 127.0.0.1.)
    if (isIP(target.hostname) !== 0) {
      const verdict = policy.check(target.hostname);
      if (!verdict.allowed) {
        const error = new ReceiverBlockedError(verdict.address, verdict.range);
        process.nextTick(() => callback(error, null));
        return;
      }
    }
    connect(target, callback);
  };
}

/**
 * A `lookup` for net.connect that resolves with `resolve` and answers only the addresses the policy allows, or
 * ReceiverBlockedError when it allows none. Resolution failures (ENOTFOUND…) pass through as they are.
 */
export function guardedLookup(policy: ReceiverPolicy, resolve: AddressResolver): LookupFunction {
  return (hostname: string, lookupOptions: LookupOptions, callback) => {
    const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
    resolve(hostname, family).then(
      (addresses) => {
        const allowed: LookupAddress[] = [];
        let refused: ReceiverBlockedError | undefined;
        for (const entry of addresses) {
          const verdict = policy.check(entry.address);
          if (verdict.allowed) allowed.push(entry);
          else refused ??= new ReceiverBlockedError(verdict.address, verdict.range);
        }
        const first = allowed[0];
        if (first === undefined) {
          const error: NodeJS.ErrnoException = refused ?? Object.assign(new Error(`no address found for ${hostname}`), { code: 'ENOTFOUND' });
          callback(error, '', 0);
        } else if (lookupOptions.all === true) {
          callback(null, allowed);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
