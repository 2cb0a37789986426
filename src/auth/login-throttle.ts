/**
 * Sign-in throttling: slow guessing down without locking the owner of a correct password out (docs/security.md).
 *
 * - **Per client address**: at most `addressMaxFailures` failed sign-ins per `addressWindowMs`, counted from the
 *   window's first failure; past that, every sign-in from the address, right password or not, is refused (429) until
 *   the window ends. Generous by default (50 per 15 min, `LOGIN_FAILURES_PER_ADDRESS`): many users may share one
 *   address behind a NAT or a proxy, and their typos add up. A success from the address does not lower its count, so
 *   an attacker cannot reset it by signing in to an account of their own between guesses. IPv6 is counted per /64,
 *   the block one subscriber usually holds; the address is `request.ip`, which follows forwarded headers only from
 *   the proxies `TRUST_PROXY` names.
 * - **Per account** (the user, or the login string when no user has it): the first `accountFreeFailures` failures
 *   cost nothing; then each attempt on the account, from any address, must come at least
 *   min(`accountBaseDelayMs` × 2^(failures − free), `accountMaxDelayMs`) after the previous one: 1 s, 2 s, 4 s … 30 s,
 *   refused with 429 and `Retry-After` before that. A guesser spread over many addresses gets one guess per 30 s on an
 *   account; the owner, from an address that is not over its own limit, waits at most 30 s, never 15 minutes. A
 *   success resets that account's count and nothing else. Failures are forgotten `accountWindowMs` after the last.
 *   Unknown logins are gated alike, so a 429 tells nothing about whether an account exists.
 * - **Counted before the password is checked**: each attempt reserves its place synchronously, before scrypt runs
 *   (about 50 ms), and the reservation is settled after: a failure stays counted, a success gives it back. Concurrent
 *   attempts therefore cannot all pass the check before any is counted (200 at once from one address: 200 × 401
 *   before this). Refused attempts are not counted: they checked no password.
 * - **Memory**: per process (several processes multiply the per-address allowance, still a tiny rate against scrypt),
 *   bounded: past `maxEntries` per table the finished entries are swept, then the oldest dropped.
 *
 * What remains: a guesser who spends one guess each time an account's delay runs out keeps its owner waiting up to
 * `accountMaxDelayMs` per try; spread over addresses, each of those stays under its own limit.
 */
export interface LoginThrottlePolicy {
  addressMaxFailures: number;
  addressWindowMs: number;
  accountFreeFailures: number;
  accountBaseDelayMs: number;
  accountMaxDelayMs: number;
  accountWindowMs: number;
  maxEntries: number;
}

export const DEFAULT_LOGIN_THROTTLE_POLICY: Readonly<LoginThrottlePolicy> = Object.freeze({
  addressMaxFailures: 50,
  addressWindowMs: 15 * 60_000,
  accountFreeFailures: 5,
  accountBaseDelayMs: 1000,
  accountMaxDelayMs: 30_000,
  accountWindowMs: 15 * 60_000,
  maxEntries: 50_000,
});

/** A place taken before the password check; settle it once with what the check found. */
export interface Reservation {
  settle(outcome: 'failure' | 'success' | 'none'): void;
}

export type Admission = { allowed: true; reservation: Reservation } | { allowed: false; retryAfterSeconds: number };

interface AddressEntry {
  failures: number;
  pending: number;
  windowStart: number;
}

interface AccountEntry {
  failures: number;
  pending: number;
  lastAt: number;
}

export class LoginThrottle {
  readonly policy: Readonly<LoginThrottlePolicy>;
  #addresses = new Map<string, AddressEntry>();
  #accounts = new Map<string, AccountEntry>();

  constructor(
    policy: Partial<LoginThrottlePolicy> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.policy = Object.freeze({ ...DEFAULT_LOGIN_THROTTLE_POLICY, ...policy });
  }

  /** Reserves an attempt from this client address (its key from `addressKey`), or says how long to wait. */
  admitAddress(address: string): Admission {
    const { addressMaxFailures, addressWindowMs } = this.policy;
    const now = this.now();
    let entry = this.#addresses.get(address);
    if (entry && now - entry.windowStart >= addressWindowMs) {
      entry.failures = 0;
      entry.windowStart = now;
    }
    if (!entry) {
      entry = { failures: 0, pending: 0, windowStart: now };
      this.#insert(this.#addresses, address, entry, (e) => e.pending === 0 && now - e.windowStart >= addressWindowMs);
    }
    if (entry.failures + entry.pending >= addressMaxFailures) {
      // Over the limit: until the window ends. Full only of attempts in flight: those settle within a second.
      const waitMs = entry.failures >= addressMaxFailures ? entry.windowStart + addressWindowMs - now : 1000;
      return { allowed: false, retryAfterSeconds: seconds(waitMs) };
    }
    entry.pending++;
    const held = entry;
    return {
      allowed: true,
      reservation: once((outcome) => {
        held.pending--;
        if (outcome === 'failure') held.failures++;
      }),
    };
  }

  /** Reserves an attempt on this account (`user:<id>`, or `login:<lowercased login>`), or says how long to wait. */
  admitAccount(account: string): Admission {
    const { accountFreeFailures, accountWindowMs } = this.policy;
    const now = this.now();
    let entry = this.#accounts.get(account);
    if (entry && entry.pending === 0 && now - entry.lastAt >= accountWindowMs) {
      this.#accounts.delete(account);
      entry = undefined;
    }
    if (!entry) {
      entry = { failures: 0, pending: 0, lastAt: now };
      this.#insert(this.#accounts, account, entry, (e) => e.pending === 0 && now - e.lastAt >= accountWindowMs);
    }
    // An attempt in flight counts as a failure until it settles: a burst gets no more than the free attempts at once.
    const attempts = entry.failures + entry.pending;
    if (attempts >= accountFreeFailures) {
      const waitMs = entry.lastAt + this.accountDelayMs(attempts) - now;
      if (waitMs > 0) return { allowed: false, retryAfterSeconds: seconds(waitMs) };
    }
    entry.pending++;
    entry.lastAt = now;
    const held = entry;
    return {
      allowed: true,
      reservation: once((outcome) => {
        held.pending--;
        if (outcome === 'failure') held.failures++;
        // The owner got in: their account starts afresh. Nothing else is reset (the address keeps its count).
        if (outcome === 'success' && this.#accounts.get(account) === held) this.#accounts.delete(account);
      }),
    };
  }

  /** The wait after `attempts` failed (or pending) attempts, once past the free ones. */
  accountDelayMs(attempts: number): number {
    const { accountFreeFailures, accountBaseDelayMs, accountMaxDelayMs } = this.policy;
    if (attempts < accountFreeFailures) return 0;
    const steps = Math.min(attempts - accountFreeFailures, 30);
    return Math.min(accountBaseDelayMs * 2 ** steps, accountMaxDelayMs);
  }

  /** Entries held now, for the memory bound's test. */
  get size(): { addresses: number; accounts: number } {
    return { addresses: this.#addresses.size, accounts: this.#accounts.size };
  }

  // Bounded memory under a spray of addresses or logins: at the bound, drop finished entries; if that is not
  // enough, the oldest (a Map iterates in insertion order) down to 90%, so the sweep runs once per 10% of inserts.
  #insert<E>(table: Map<string, E>, key: string, entry: E, finished: (entry: E) => boolean): void {
    if (table.size >= this.policy.maxEntries) {
      for (const [k, e] of table) if (finished(e)) table.delete(k);
      const keep = Math.floor(this.policy.maxEntries * 0.9);
      for (const k of table.keys()) {
        if (table.size <= keep) break;
        table.delete(k);
      }
    }
    table.set(key, entry);
  }
}

function once(settle: Reservation['settle']): Reservation {
  let settled = false;
  return {
    settle(outcome) {
      if (settled) return;
      settled = true;
      settle(outcome);
    },
  };
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
