import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import type { AddressResolver } from '../../src/network/guarded-connector.js';
import { parseReceiverPolicy } from '../../src/network/receiver-policy.js';
import { checkReceiverUrlAgainstPolicy } from '../../src/network/receiver-url-check.js';

// Nothing here connects anywhere: the check resolves names (with a test resolver, or the system's for localhost)
// and judges the answers.

const DEFAULT = parseReceiverPolicy();
const DENY_LOOPBACK = parseReceiverPolicy({ RECEIVER_DENY: '127.0.0.0/8,::1/128' });

const answering =
  (addresses: string[]): AddressResolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const failing =
  (code: string): AddressResolver =>
  async (hostname) => {
    throw Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code });
  };

async function refusal(check: Promise<void>): Promise<AppError> {
  try {
    await check;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('the URL was accepted');
}

describe('checking a receiver URL when a webhook is created', () => {
  it('refuses an address literal the policy denies, in any spelling, naming the address and the rule', async () => {
    const cases: [string, string][] = [
      ['http://169.254.169.254/latest/meta-data/', 'url points to 169.254.169.254, which the receiver policy denies (169.254.0.0/16 link-local)'],
      ['http://[::ffff:169.254.169.254]/', 'url points to 169.254.169.254, which the receiver policy denies (169.254.0.0/16 link-local)'],
      ['http://0xa9fea9fe/', 'url points to 169.254.169.254, which the receiver policy denies (169.254.0.0/16 link-local)'],
      ['https://[fd00:ec2::254]:8443/', 'url points to fd00:ec2::254, which the receiver policy denies (fd00:ec2::254/128 AWS metadata (IPv6))'],
      ['http://0.0.0.0:8080/', 'url points to 0.0.0.0, which the receiver policy denies (0.0.0.0/8 unspecified)'],
    ];
    for (const [url, message] of cases) {
      const error = await refusal(checkReceiverUrlAgainstPolicy(url, DEFAULT, failing('ENOTFOUND')));
      expect(error, url).toBeInstanceOf(AppError);
      expect({ key: error.key, status: error.status, message: error.message }, url).toEqual({ key: 'invalid_parameter', status: 400, message });
    }
  });

  it('refuses loopback literals when the operator denies loopback, and accepts them by default', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://2130706433/', 'http://127.1/', 'http://[::1]:3000/']) {
      await expect(checkReceiverUrlAgainstPolicy(url, DEFAULT), url).resolves.toBeUndefined();
      const error = await refusal(checkReceiverUrlAgainstPolicy(url, DENY_LOOPBACK));
      expect(error.message, url).toMatch(/^url points to (127\.0\.0\.1|::1), which the receiver policy denies \((127\.0\.0\.0\/8|::1\/128) RECEIVER_DENY\)$/);
    }
  });

  it('refuses a name whose every address is denied, naming the name, the address and the rule', async () => {
    const error = await refusal(checkReceiverUrlAgainstPolicy('https://metadata.test/', DEFAULT, answering(['169.254.169.254', 'fe80::a9fe:a9fe'])));
    expect(error.key).toBe('invalid_parameter');
    expect(error.message).toBe('url host metadata.test resolves to 169.254.169.254, which the receiver policy denies (169.254.0.0/16 link-local)');
  });

  it('refuses localhost through the system resolver when loopback is denied', async () => {
    const error = await refusal(checkReceiverUrlAgainstPolicy('http://localhost:9/', parseReceiverPolicy({ RECEIVER_POLICY: 'public-only' })));
    expect(error.message).toMatch(/^url host localhost resolves to (127\.0\.0\.1|::1), which the receiver policy denies \((127\.0\.0\.0\/8|::1\/128) loopback\)$/);
  });

  it('accepts a name with at least one allowed address: connections will go there only', async () => {
    await expect(checkReceiverUrlAgainstPolicy('https://mixed.test/', DEFAULT, answering(['169.254.169.254', '127.0.0.1']))).resolves.toBeUndefined();
  });

  it('accepts a name that does not resolve (yet): it is checked again at every connection', async () => {
    await expect(checkReceiverUrlAgainstPolicy('https://later.test/', DENY_LOOPBACK, failing('ENOTFOUND'))).resolves.toBeUndefined();
    await expect(checkReceiverUrlAgainstPolicy('https://later.test/', DENY_LOOPBACK, answering([]))).resolves.toBeUndefined();
    // a resolver that never answers: the check gives up after its lookup time-out and accepts
    const silent: AddressResolver = () => new Promise(() => {});
    await expect(checkReceiverUrlAgainstPolicy('https://slow.test/', DENY_LOOPBACK, silent, 50)).resolves.toBeUndefined();
  });
});
