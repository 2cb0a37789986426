/**
 * Counts failed sign-ins per client address: past `maxFailures` within `windowMs`, that address is refused
 * until the window has passed. Kept in each process's memory: an attacker spread over processes gets at most
 * `maxFailures` per process, still a tiny rate against scrypt-hashed passwords.
 */
export class LoginThrottle {
  #failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    private readonly maxFailures = 10,
    private readonly windowMs = 15 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until this address may try again, or 0 when it may now. */
  retryAfterSeconds(address: string): number {
    const entry = this.#failures.get(address);
    if (!entry) return 0;
    const elapsed = this.now() - entry.windowStart;
    if (elapsed >= this.windowMs) {
      this.#failures.delete(address);
      return 0;
    }
    return entry.count >= this.maxFailures ? Math.ceil((this.windowMs - elapsed) / 1000) : 0;
  }

  recordFailure(address: string): void {
    const now = this.now();
    const entry = this.#failures.get(address);
    if (!entry || now - entry.windowStart >= this.windowMs) {
      this.#failures.set(address, { count: 1, windowStart: now });
      this.#forgetOld(now);
    } else {
      entry.count++;
    }
  }

  recordSuccess(address: string): void {
    this.#failures.delete(address);
  }

  // Bounded memory under a spray of addresses: drop windows that are over.
  #forgetOld(now: number): void {
    if (this.#failures.size < 10_000) return;
    for (const [address, entry] of this.#failures) {
      if (now - entry.windowStart >= this.windowMs) this.#failures.delete(address);
    }
  }
}
