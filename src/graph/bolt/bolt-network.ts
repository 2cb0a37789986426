/**
 * Where a Bolt graph's connections may go: the receiver policy's rules (src/network/receiver-policy.ts), checked as
 * each connection is made, as deliveries are (guarded-connector.ts). A data source's URL is an Admin's to choose, and
 * without this `bolt://169.254.169.254` was tried, and the answers told a closed port, an HTTP server, another
 * protocol and a silent port apart: a port scanner of the service's network.
 *
 * neo4j-driver has no option for the socket or its address lookup: its `resolver` is used only for a routing URL's
 * first address (neo4j://), not for bolt:// URLs nor the addresses a cluster's routing table names, and it
 * connects with net.connect / tls.connect itself. So the check sits under the driver: every driver call of a
 * BoltGraph runs inside `guardedGraphCall`, an AsyncLocalStorage context that the sockets the driver opens from it
 * inherit, and a socket opened in that context connects only where the policy allows: an address literal is checked
 * as it is, and refused before any connection; a host name is resolved once by guardedLookup, which hands the socket
 * only the allowed addresses (so a second resolution, DNS rebinding, cannot send it elsewhere). Sockets opened
 * outside such a context (the database's, deliveries' through their own guarded connector) are left as they are.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isIP, Socket } from 'node:net';
import { guardedLookup, resolveWithDns, type AddressResolver } from '../../network/guarded-connector.js';
import { ReceiverBlockedError } from '../../network/receiver-blocked.js';
import type { ReceiverPolicy } from '../../network/receiver-policy.js';

export interface GraphConnectionGuard {
  policy: ReceiverPolicy;
  resolve?: AddressResolver | undefined;
}

const guards = new AsyncLocalStorage<GraphConnectionGuard>();
let installed = false;

/** Runs `call` (a driver call) so that every connection it opens is checked against `guard`'s policy. */
export function guardedGraphCall<T>(guard: GraphConnectionGuard, call: () => Promise<T>): Promise<T> {
  installConnectGuard();
  return guards.run(guard, call);
}

type ConnectArgs = Parameters<Socket['connect']>;

/** Wraps net.Socket's connect once per process (TLS sockets connect through it too); it acts only inside guardedGraphCall. */
function installConnectGuard(): void {
  if (installed) return;
  installed = true;
  const connect = Socket.prototype.connect;
  Socket.prototype.connect = function guardedConnect(this: Socket, ...args: unknown[]): Socket {
    const guard = guards.getStore();
    if (!guard) return connect.apply(this, args as ConnectArgs);
    // net.connect hands its arguments normalised ([options, callback]); tls.connect an options object.
    const options = Array.isArray(args[0]) ? (args[0][0] as Record<string, unknown>) : typeof args[0] === 'object' && args[0] !== null ? (args[0] as Record<string, unknown>) : undefined;
    const refuse = (error: Error) => {
      process.nextTick(() => this.destroy(error));
      return this;
    };
    if (!options || typeof options.path === 'string') return refuse(new ReceiverBlockedError(String(options?.path ?? args[0]), 'not a network address'));
    const host = typeof options.host === 'string' && options.host !== '' ? options.host : 'localhost';
    const literal = host.startsWith('[') ? host.slice(1, -1) : host;
    if (isIP(literal) !== 0) {
      const verdict = guard.policy.check(literal);
      if (!verdict.allowed) return refuse(new ReceiverBlockedError(verdict.address, verdict.range));
    } else {
      options.lookup = guardedLookup(guard.policy, guard.resolve ?? resolveWithDns);
    }
    return connect.apply(this, args as ConnectArgs);
  } as typeof Socket.prototype.connect;
}
