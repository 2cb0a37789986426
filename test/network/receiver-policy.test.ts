import { describe, expect, it } from 'vitest';
import { ConfigError, readProcessConfig } from '../../src/env.js';
import { parseCidr, parseIpAddress } from '../../src/network/ip-address.js';
import { DEFAULT_RECEIVER_POLICY, parseReceiverPolicy, ReceiverPolicyError, type ReceiverPolicySettings } from '../../src/network/receiver-policy.js';

// Pure: no address here is ever connected to.

type Row = [address: string, expected: string];
const ALLOW = 'allowed';

/** `allowed`, or `<address judged> (<range>)` as the blocked error prints it. */
function verdictOf(settings: ReceiverPolicySettings, address: string): string {
  const verdict = parseReceiverPolicy(settings).check(address);
  return verdict.allowed ? ALLOW : `${verdict.address} (${verdict.range})`;
}

const DEFAULT_TABLE: Row[] = [
  // link-local, with the cloud metadata address, at its edges
  ['169.254.169.254', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['169.254.0.0', '169.254.0.0 (169.254.0.0/16 link-local)'],
  ['169.254.255.255', '169.254.255.255 (169.254.0.0/16 link-local)'],
  ['169.253.255.255', ALLOW],
  ['169.255.0.0', ALLOW],
  ['169.254.170.2', '169.254.170.2 (169.254.0.0/16 link-local)'],
  ['fe80::1', 'fe80::1 (fe80::/10 link-local)'],
  ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff (fe80::/10 link-local)'],
  ['fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff', ALLOW],
  ['fe80::a9fe:a9fe%eth0', 'fe80::a9fe:a9fe (fe80::/10 link-local)'],
  // the same metadata address in other spellings
  ['::ffff:169.254.169.254', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['[::ffff:169.254.169.254]', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['::ffff:a9fe:a9fe', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['0:0:0:0:0:ffff:a9fe:a9fe', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['64:ff9b::169.254.169.254', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['64:ff9b::a9fe:a9fe', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['::ffff:0:a9fe:a9fe', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['::169.254.169.254', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['0xa9fea9fe', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['2852039166', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['0251.0376.0251.0376', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['169.16689662', '169.254.169.254 (169.254.0.0/16 link-local)'],
  // other clouds' metadata
  ['100.100.100.200', '100.100.100.200 (100.100.100.200/32 Alibaba Cloud metadata)'],
  ['100.100.100.199', ALLOW],
  ['fd00:ec2::254', 'fd00:ec2::254 (fd00:ec2::254/128 AWS metadata (IPv6))'],
  ['fd00:ec2::253', ALLOW],
  ['fd00:ec2::23', 'fd00:ec2::23 (fd00:ec2::23/128 AWS EKS pod identity (IPv6))'],
  ['fd20:ce::254', 'fd20:ce::254 (fd20:ce::254/128 Google Cloud metadata (IPv6))'],
  ['168.63.129.16', '168.63.129.16 (168.63.129.16/32 Azure platform (WireServer))'],
  ['192.0.0.192', '192.0.0.192 (192.0.0.192/32 Oracle Cloud metadata (legacy))'],
  // unspecified
  ['0.0.0.0', '0.0.0.0 (0.0.0.0/8 unspecified)'],
  ['0.255.255.255', '0.255.255.255 (0.0.0.0/8 unspecified)'],
  ['1.0.0.0', ALLOW],
  ['::', ':: (::/128 unspecified)'],
  ['::ffff:0.0.0.0', '0.0.0.0 (0.0.0.0/8 unspecified)'],
  // multicast, broadcast, reserved
  ['224.0.0.0', '224.0.0.0 (224.0.0.0/4 multicast)'],
  ['239.255.255.255', '239.255.255.255 (224.0.0.0/4 multicast)'],
  ['223.255.255.255', ALLOW],
  ['ff02::1', 'ff02::1 (ff00::/8 multicast)'],
  ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', ALLOW],
  ['240.0.0.0', '240.0.0.0 (240.0.0.0/4 reserved)'],
  ['255.255.255.254', '255.255.255.254 (240.0.0.0/4 reserved)'],
  ['255.255.255.255', '255.255.255.255 (255.255.255.255/32 broadcast)'],
  ['64:ff9b:1::a', '64:ff9b:1::a (64:ff9b:1::/48 local-use NAT64)'],
  // allowed by default: loopback, private, public, in every spelling
  ['127.0.0.1', ALLOW],
  ['127.255.255.255', ALLOW],
  ['0x7f000001', ALLOW],
  ['2130706433', ALLOW],
  ['127.1', ALLOW],
  ['::1', ALLOW],
  ['[::1]', ALLOW],
  ['::ffff:127.0.0.1', ALLOW],
  ['10.0.0.1', ALLOW],
  ['172.16.0.1', ALLOW],
  ['192.168.1.1', ALLOW],
  ['fd12:3456::1', ALLOW],
  ['100.64.0.1', ALLOW],
  ['93.184.216.34', ALLOW],
  ['2606:4700::1111', ALLOW],
  ['64:ff9b::808:808', ALLOW],
  // not addresses: refused (a resolver never answers these; failing closed is the safe reading)
  ['metadata.google.internal', 'metadata.google.internal (not an IP address)'],
  ['1.2.3.4.5', '1.2.3.4.5 (not an IP address)'],
];

const PUBLIC_ONLY_TABLE: Row[] = [
  ['127.0.0.1', '127.0.0.1 (127.0.0.0/8 loopback)'],
  ['127.255.255.255', '127.255.255.255 (127.0.0.0/8 loopback)'],
  ['128.0.0.0', ALLOW],
  ['126.255.255.255', ALLOW],
  ['0x7f000001', '127.0.0.1 (127.0.0.0/8 loopback)'],
  ['127.1', '127.0.0.1 (127.0.0.0/8 loopback)'],
  ['::1', '::1 (::1/128 loopback)'],
  ['::ffff:127.0.0.1', '127.0.0.1 (127.0.0.0/8 loopback)'],
  ['64:ff9b::7f00:1', '127.0.0.1 (127.0.0.0/8 loopback)'],
  ['10.0.0.0', '10.0.0.0 (10.0.0.0/8 private)'],
  ['10.255.255.255', '10.255.255.255 (10.0.0.0/8 private)'],
  ['11.0.0.0', ALLOW],
  ['172.15.255.255', ALLOW],
  ['172.16.0.0', '172.16.0.0 (172.16.0.0/12 private)'],
  ['172.31.255.255', '172.31.255.255 (172.16.0.0/12 private)'],
  ['172.32.0.0', ALLOW],
  ['192.168.0.0', '192.168.0.0 (192.168.0.0/16 private)'],
  ['192.169.0.0', ALLOW],
  ['fc00::1', 'fc00::1 (fc00::/7 unique-local)'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff (fc00::/7 unique-local)'],
  ['fe00::', ALLOW],
  ['100.64.0.0', '100.64.0.0 (100.64.0.0/10 shared address space (CGNAT))'],
  ['100.127.255.255', '100.127.255.255 (100.64.0.0/10 shared address space (CGNAT))'],
  ['100.128.0.0', ALLOW],
  ['198.18.0.0', '198.18.0.0 (198.18.0.0/15 benchmarking)'],
  ['198.19.255.255', '198.19.255.255 (198.18.0.0/15 benchmarking)'],
  ['198.20.0.0', ALLOW],
  ['2001:2::1', '2001:2::1 (2001:2::/48 benchmarking)'],
  ['192.0.2.1', '192.0.2.1 (192.0.2.0/24 documentation)'],
  ['2001:db8::1', '2001:db8::1 (2001:db8::/32 documentation)'],
  // the defaults still hold, with their own names
  ['169.254.169.254', '169.254.169.254 (169.254.0.0/16 link-local)'],
  ['fd00:ec2::254', 'fd00:ec2::254 (fd00:ec2::254/128 AWS metadata (IPv6))'],
  ['93.184.216.34', ALLOW],
  ['2606:4700::1111', ALLOW],
];

describe('the default receiver policy', () => {
  it.each(DEFAULT_TABLE)('%s → %s', (address, expected) => {
    expect(verdictOf({}, address)).toBe(expected);
  });

  it('is what an empty environment gives', () => {
    expect(readProcessConfig({}).receiverPolicy.describe()).toBe('default');
    expect(DEFAULT_RECEIVER_POLICY.check('169.254.169.254').allowed).toBe(false);
  });
});

describe('RECEIVER_POLICY=public-only', () => {
  it.each(PUBLIC_ONLY_TABLE)('%s → %s', (address, expected) => {
    expect(verdictOf({ RECEIVER_POLICY: 'public-only' }, address)).toBe(expected);
  });
});

describe('RECEIVER_DENY and RECEIVER_ALLOW', () => {
  const cases: [ReceiverPolicySettings, string, string][] = [
    // the connect-time tests' setting
    [{ RECEIVER_DENY: '127.0.0.0/8,::1/128' }, '127.0.0.1', '127.0.0.1 (127.0.0.0/8 RECEIVER_DENY)'],
    [{ RECEIVER_DENY: '127.0.0.0/8,::1/128' }, '::1', '::1 (::1/128 RECEIVER_DENY)'],
    [{ RECEIVER_DENY: '127.0.0.0/8,::1/128' }, '::ffff:127.0.0.1', '127.0.0.1 (127.0.0.0/8 RECEIVER_DENY)'],
    [{ RECEIVER_DENY: '127.0.0.0/8,::1/128' }, '10.0.0.1', ALLOW],
    // a single address, spaces around entries, host bits cleared
    [{ RECEIVER_DENY: ' 10.0.0.5 , 10.9.8.7/16' }, '10.0.0.5', '10.0.0.5 (10.0.0.5/32 RECEIVER_DENY)'],
    [{ RECEIVER_DENY: ' 10.0.0.5 , 10.9.8.7/16' }, '10.0.0.6', ALLOW],
    [{ RECEIVER_DENY: ' 10.0.0.5 , 10.9.8.7/16' }, '10.9.255.255', '10.9.255.255 (10.9.0.0/16 RECEIVER_DENY)'],
    // allow wins for its range, over the defaults and over RECEIVER_DENY
    [{ RECEIVER_ALLOW: '169.254.10.0/24' }, '169.254.10.7', ALLOW],
    [{ RECEIVER_ALLOW: '169.254.10.0/24' }, '169.254.11.7', '169.254.11.7 (169.254.0.0/16 link-local)'],
    [{ RECEIVER_DENY: '10.0.0.0/8', RECEIVER_ALLOW: '10.1.0.0/16' }, '10.1.2.3', ALLOW],
    [{ RECEIVER_DENY: '10.0.0.0/8', RECEIVER_ALLOW: '10.1.0.0/16' }, '10.2.0.1', '10.2.0.1 (10.0.0.0/8 RECEIVER_DENY)'],
    [{ RECEIVER_POLICY: 'public-only', RECEIVER_ALLOW: '192.168.10.0/24,fd12::/16' }, '192.168.10.20', ALLOW],
    [{ RECEIVER_POLICY: 'public-only', RECEIVER_ALLOW: '192.168.10.0/24,fd12::/16' }, '::ffff:192.168.10.20', ALLOW],
    [{ RECEIVER_POLICY: 'public-only', RECEIVER_ALLOW: '192.168.10.0/24,fd12::/16' }, 'fd12::5', ALLOW],
    [{ RECEIVER_POLICY: 'public-only', RECEIVER_ALLOW: '192.168.10.0/24,fd12::/16' }, '192.168.11.1', '192.168.11.1 (192.168.0.0/16 private)'],
    // an IPv4-mapped range is its IPv4 range
    [{ RECEIVER_ALLOW: '::ffff:169.254.1.0/120' }, '169.254.1.1', ALLOW],
    // allowing all of IPv6 does not open an IPv4 address through its mapped or NAT64 form
    [{ RECEIVER_ALLOW: '::/0' }, '::ffff:169.254.169.254', '169.254.169.254 (169.254.0.0/16 link-local)'],
    [{ RECEIVER_ALLOW: '::/0' }, '64:ff9b::a9fe:a9fe', '169.254.169.254 (169.254.0.0/16 link-local)'],
    [{ RECEIVER_ALLOW: '::/0' }, 'fe80::1', ALLOW],
    // deny ranges are matched against the IPv6 address as written too
    [{ RECEIVER_DENY: '64:ff9b::/96' }, '64:ff9b::808:808', '64:ff9b::808:808 (64:ff9b::/96 RECEIVER_DENY)'],
    // everything, for an operator who wants no policy at all
    [{ RECEIVER_ALLOW: '0.0.0.0/0,::/0' }, '169.254.169.254', ALLOW],
  ];
  it.each(cases)('%j: %s → %s', (settings, address, expected) => {
    expect(verdictOf(settings, address)).toBe(expected);
  });

  it('names the variable and the entry it cannot read', () => {
    const bad: [ReceiverPolicySettings, RegExp][] = [
      [{ RECEIVER_POLICY: 'strict' }, /^RECEIVER_POLICY must be one of default, public-only, got "strict"$/],
      [{ RECEIVER_DENY: '10.0.0.0/8,example.com' }, /^RECEIVER_DENY .*"example\.com" is neither$/],
      [{ RECEIVER_ALLOW: '10.0.0.0/33' }, /^RECEIVER_ALLOW .*"10\.0\.0\.0\/33" is neither$/],
      [{ RECEIVER_ALLOW: 'fd00::/129' }, /^RECEIVER_ALLOW .*"fd00::\/129" is neither$/],
      [{ RECEIVER_DENY: '0x7f000001' }, /^RECEIVER_DENY .*"0x7f000001" is neither$/],
      [{ RECEIVER_DENY: '10.0.0.0/' }, /^RECEIVER_DENY .*"10\.0\.0\.0\/" is neither$/],
    ];
    for (const [settings, message] of bad) {
      expect(() => parseReceiverPolicy(settings), JSON.stringify(settings)).toThrow(ReceiverPolicyError);
      expect(() => parseReceiverPolicy(settings), JSON.stringify(settings)).toThrow(message);
    }
  });

  it('comes from the environment, where a bad entry is a ConfigError naming the variable', () => {
    const config = readProcessConfig({ RECEIVER_POLICY: 'public-only', RECEIVER_DENY: '93.184.216.0/24', RECEIVER_ALLOW: '10.0.0.5' });
    expect(config.receiverPolicy.describe()).toBe('public-only; denied also 93.184.216.0/24; allowed 10.0.0.5/32');
    expect(JSON.parse(JSON.stringify(config)).receiverPolicy).toBe('public-only; denied also 93.184.216.0/24; allowed 10.0.0.5/32');
    expect(config.receiverPolicy.check('93.184.216.34')).toEqual({ allowed: false, address: '93.184.216.34', range: '93.184.216.0/24 RECEIVER_DENY' });
    expect(() => readProcessConfig({ RECEIVER_DENY: 'nope' })).toThrow(ConfigError);
    expect(() => readProcessConfig({ RECEIVER_DENY: 'nope' })).toThrow(/^RECEIVER_DENY .*"nope"/);
    expect(() => readProcessConfig({ RECEIVER_POLICY: 'open' })).toThrow(/^RECEIVER_POLICY /);
  });
});

describe('address parsing', () => {
  it('reads every spelling of one address as the same number, and host names as none', () => {
    const loopback = parseIpAddress('127.0.0.1')!;
    for (const spelling of ['0x7f000001', '2130706433', '127.1', '0177.0.0.1', '127.0.1', '0x7f.0.0.1']) {
      expect(parseIpAddress(spelling), spelling).toEqual(loopback);
    }
    for (const name of ['localhost', 'dead.beef', 'example.com', '09', '256.1.1.1', '', '1.2.3.4/8', '[::1', 'fe80::zz']) {
      expect(parseIpAddress(name), name).toBeUndefined();
    }
  });

  it('writes CIDRs canonically', () => {
    expect(parseCidr('10.1.2.3/8')?.text).toBe('10.0.0.0/8');
    expect(parseCidr('FD00:0:0::1/8')?.text).toBe('fd00::/8');
    expect(parseCidr('::ffff:10.0.0.0/104')?.text).toBe('10.0.0.0/8');
    expect(parseCidr('::ffff:10.0.0.0/80')?.text).toBe('::/80');
    expect(parseCidr('0.0.0.0/0')?.text).toBe('0.0.0.0/0');
  });
});
