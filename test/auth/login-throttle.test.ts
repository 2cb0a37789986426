import { describe, expect, it } from 'vitest';
import { LoginThrottle, type Admission } from '../../src/auth/login-throttle.js';
import { addressKey } from '../../src/http/client-address.js';

/** The policy's arithmetic, on a clock the test moves (the HTTP behaviour is in sign-in.test.ts). */
describe('LoginThrottle', () => {
  const clock = () => {
    let now = 1_000_000;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };
  const allowed = (admission: Admission) => {
    if (!admission.allowed) throw new Error(`refused for ${admission.retryAfterSeconds} s`);
    return admission.reservation;
  };
  const retryAfter = (admission: Admission) => (admission.allowed ? 0 : admission.retryAfterSeconds);

  it('per account: free failures, then a wait that doubles from 1 s up to 30 s, never more', () => {
    const c = clock();
    const throttle = new LoginThrottle({}, c.now);
    for (let i = 0; i < 5; i++) allowed(throttle.admitAccount('user:1')).settle('failure');
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const refused = throttle.admitAccount('user:1');
      waits.push(retryAfter(refused));
      c.advance(waits.at(-1)! * 1000);
      allowed(throttle.admitAccount('user:1')).settle('failure');
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 30, 30, 30]);
  });

  it('per account: a success resets that account only; failures are forgotten 15 minutes after the last', () => {
    const c = clock();
    const throttle = new LoginThrottle({}, c.now);
    for (const account of ['user:1', 'user:2']) for (let i = 0; i < 5; i++) allowed(throttle.admitAccount(account)).settle('failure');
    c.advance(1000);
    allowed(throttle.admitAccount('user:1')).settle('success');
    // user:1 starts afresh: five more failures without a wait. user:2 still waits.
    for (let i = 0; i < 5; i++) allowed(throttle.admitAccount('user:1')).settle('failure');
    allowed(throttle.admitAccount('user:2')).settle('failure'); // 1 s have passed: one attempt is allowed…
    expect(retryAfter(throttle.admitAccount('user:2'))).toBe(2); // …and the next waits longer.
    c.advance(15 * 60_000 + 2000);
    for (let i = 0; i < 5; i++) allowed(throttle.admitAccount('user:2')).settle('failure');
  });

  it('per address: a fixed window of failures; a success gives its reservation back but resets nothing', () => {
    const c = clock();
    const throttle = new LoginThrottle({ addressMaxFailures: 3 }, c.now);
    allowed(throttle.admitAddress('a')).settle('failure');
    allowed(throttle.admitAddress('a')).settle('success');
    allowed(throttle.admitAddress('a')).settle('failure');
    allowed(throttle.admitAddress('a')).settle('failure');
    expect(retryAfter(throttle.admitAddress('a'))).toBe(15 * 60);
    c.advance(10 * 60_000);
    expect(retryAfter(throttle.admitAddress('a'))).toBe(5 * 60);
    expect(retryAfter(throttle.admitAddress('b'))).toBe(0);
    c.advance(5 * 60_000);
    allowed(throttle.admitAddress('a')).settle('failure');
  });

  it('reserves synchronously: attempts in flight count until they settle, and a reservation settles once', () => {
    const throttle = new LoginThrottle({ addressMaxFailures: 2 });
    const first = allowed(throttle.admitAddress('a'));
    const second = allowed(throttle.admitAddress('a'));
    expect(retryAfter(throttle.admitAddress('a'))).toBe(1); // full of attempts in flight
    first.settle('success');
    first.settle('failure'); // ignored
    second.settle('none');
    allowed(throttle.admitAddress('a')).settle('failure');
    allowed(throttle.admitAddress('a')).settle('failure');
    expect(retryAfter(throttle.admitAddress('a'))).toBeGreaterThan(60);
  });

  it('keeps its memory bounded under a spray of addresses and logins', () => {
    const throttle = new LoginThrottle({ maxEntries: 100 });
    for (let i = 0; i < 5000; i++) {
      allowed(throttle.admitAddress(`addr-${i}`)).settle('failure');
      allowed(throttle.admitAccount(`login:${i}`)).settle('failure');
    }
    expect(throttle.size.addresses).toBeLessThanOrEqual(100);
    expect(throttle.size.accounts).toBeLessThanOrEqual(100);
  });

  it('counts IPv4 as is (also IPv4-mapped) and IPv6 per /64', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});
