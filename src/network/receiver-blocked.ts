/** The code of ReceiverBlockedError, for a caller that meets it inside another error (undici's, an AggregateError). */
export const RECEIVER_BLOCKED = 'ERR_RECEIVER_BLOCKED';

/**
 * A connection the receiver policy refused before it was made. Its message is what the attempt log shows:
 * `blocked by receiver policy: 169.254.169.254 (169.254.0.0/16 link-local)`.
 */
export class ReceiverBlockedError extends Error {
  override name = 'ReceiverBlockedError';
  readonly code = RECEIVER_BLOCKED;

  constructor(
    /** The address refused, as the policy judged it (the IPv4 address a mapped or NAT64 address carries). */
    readonly address: string,
    /** The rule that refused it: `169.254.0.0/16 link-local`. */
    readonly range: string,
  ) {
    super(`blocked by receiver policy: ${address} (${range})`);
  }
}
