import { isIP } from 'node:net';
import { invalidParameter } from '../errors.js';
import { resolveWithDns, type AddressResolver } from './guarded-connector.js';
import type { ReceiverPolicy, ReceiverVerdict } from './receiver-policy.js';

/** How long creation waits for DNS before taking the URL unchecked (the connection is checked whatever happens). */
export const CREATION_LOOKUP_TIMEOUT_MS = 3000;

/**
 * Refuses a receiver URL the policy would certainly refuse, when a webhook is created or its URL changed:
 * 400 `invalid_parameter` when its host is an address the policy denies, or a name whose every address it denies,
 * naming the address and the rule. `url` has passed checkReceiverUrl (absolute, http or https).
 *
 * A check now, not a guarantee: DNS answers change, so every connection is checked again (guardedConnector).
 * For the same reason a name that does not resolve, or not within CREATION_LOOKUP_TIMEOUT_MS, is accepted:
 * the receiver's DNS may be set up after its webhook, and a slow resolver should not fail the API call. A name
 * with some allowed addresses is accepted too: connections will use those.
 */
export async function checkReceiverUrlAgainstPolicy(
  url: string,
  policy: ReceiverPolicy,
  resolve: AddressResolver = resolveWithDns,
  lookupTimeoutMs = CREATION_LOOKUP_TIMEOUT_MS,
): Promise<void> {
  const { hostname } = new URL(url);
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) {
    // URL parsing has already written 0x7f000001, 2130706433 and 127.1 as 127.0.0.1.
    const verdict = policy.check(host);
    if (!verdict.allowed) throw invalidParameter(`url points to ${verdict.address}, which the receiver policy denies (${verdict.range})`, 'url');
    return;
  }
  const addresses = await resolveWithin(resolve, host, lookupTimeoutMs);
  if (addresses.length === 0) return;
  let firstRefusal: Extract<ReceiverVerdict, { allowed: false }> | undefined;
  for (const address of addresses) {
    const verdict = policy.check(address);
    if (verdict.allowed) return;
    firstRefusal ??= verdict;
  }
  if (firstRefusal !== undefined) {
    throw invalidParameter(`url host ${host} resolves to ${firstRefusal.address}, which the receiver policy denies (${firstRefusal.range})`, 'url');
  }
}

/** The addresses of `host`, or none when it does not resolve in time. */
async function resolveWithin(resolve: AddressResolver, host: string, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<[]>((done) => {
    timer = setTimeout(() => done([]), timeoutMs);
  });
  try {
    const found = resolve(host, 0).then(
      (entries) => entries.map((entry) => entry.address),
      () => [], // ENOTFOUND and the like: accepted, see above
    );
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
