import { cidrContains, embeddedIPv4, parseCidr, parseIpAddress, type Cidr } from './ip-address.js';

/** What the policy says of one address. `range` is printable: `169.254.0.0/16 link-local`. */
export type ReceiverVerdict = { allowed: true } | { allowed: false; address: string; range: string };

export const RECEIVER_POLICY_PRESETS = ['default', 'public-only'] as const;
export type ReceiverPolicyPreset = (typeof RECEIVER_POLICY_PRESETS)[number];

/** The environment variables the policy is made from, as written. */
export interface ReceiverPolicySettings {
  RECEIVER_POLICY?: string | undefined;
  RECEIVER_DENY?: string | undefined;
  RECEIVER_ALLOW?: string | undefined;
}

/** A bad policy setting; the message names the variable and the entry. */
export class ReceiverPolicyError extends Error {
  override name = 'ReceiverPolicyError';
}

interface Rule {
  cidr: Cidr;
  /** Why the range is there: `link-local`, `RECEIVER_DENY`. */
  label: string;
}

const rules = (label: string, ...cidrs: string[]): Rule[] => cidrs.map((text) => ({ cidr: parseCidr(text)!, label }));

/**
 * Denied whatever the preset. The metadata endpoints come first so an address is named by its most telling
 * rule (fd00:ec2::254 is also in fc00::/7, which public-only denies). The product runs on premises, where
 * receivers often live on private networks and on the same host: loopback and private ranges stay allowed, and
 * what is denied is what no receiver can be: the machine's own cloud (metadata, credentials) and addresses that
 * are not one host.
 */
const ALWAYS_DENIED: readonly Rule[] = [
  ...rules('AWS metadata (IPv6)', 'fd00:ec2::254/128'),
  ...rules('AWS EKS pod identity (IPv6)', 'fd00:ec2::23/128'),
  ...rules('Google Cloud metadata (IPv6)', 'fd20:ce::254/128'),
  ...rules('Alibaba Cloud metadata', '100.100.100.200/32'),
  ...rules('Azure platform (WireServer)', '168.63.129.16/32'),
  ...rules('Oracle Cloud metadata (legacy)', '192.0.0.192/32'),
  // 169.254.169.254 (AWS, Azure, Google, Oracle, OpenStack, DigitalOcean…), 169.254.170.2 (AWS ECS task
  // credentials), 169.254.0.23 (Tencent) and fe80::a9fe:a9fe (OpenStack over IPv6) are all link-local.
  ...rules('link-local', '169.254.0.0/16', 'fe80::/10'),
  ...rules('unspecified', '0.0.0.0/8', '::/128'),
  ...rules('broadcast', '255.255.255.255/32'),
  ...rules('multicast', '224.0.0.0/4', 'ff00::/8'),
  ...rules('reserved', '240.0.0.0/4'),
  // Its gateway forwards to an IPv4 address held in bits that depend on the operator's prefix length, so the
  // address cannot be checked; 64:ff9b::/96 (the well-known NAT64 prefix) is checked as the IPv4 address it carries.
  ...rules('local-use NAT64', '64:ff9b:1::/48'),
];

/** Denied besides by RECEIVER_POLICY=public-only: everything that is not the public internet. */
const PUBLIC_ONLY_DENIED: readonly Rule[] = [
  ...rules('loopback', '127.0.0.0/8', '::1/128'),
  ...rules('private', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'),
  ...rules('unique-local', 'fc00::/7'),
  ...rules('site-local', 'fec0::/10'),
  ...rules('shared address space (CGNAT)', '100.64.0.0/10'),
  ...rules('benchmarking', '198.18.0.0/15', '2001:2::/48'),
  ...rules('IETF protocol assignments', '192.0.0.0/24'),
  ...rules('documentation', '192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32'),
];

/**
 * Which addresses the service may send to. An address in a RECEIVER_ALLOW range is allowed whatever denies it
 * (allow wins for its range); otherwise one in a denied range (the defaults, the preset's, RECEIVER_DENY) is
 * refused; anything else is allowed.
 *
 * An IPv6 address that carries an IPv4 address (`::ffff:169.254.169.254`, NAT64 `64:ff9b::a9fe:a9fe`) is
 * judged as that IPv4 address, since that is where a connection to it goes: allow ranges are matched against
 * it alone (so `RECEIVER_ALLOW=::/0` does not open 169.254.169.254 through its mapped form), deny ranges
 * against it and against the IPv6 address as written.
 */
export class ReceiverPolicy {
  constructor(
    readonly preset: ReceiverPolicyPreset,
    private readonly deny: readonly Rule[],
    private readonly allow: readonly Rule[],
  ) {}

  /** `address` in any spelling (see parseIpAddress). Something that is not an address is refused: fail closed. */
  check(address: string): ReceiverVerdict {
    const parsed = parseIpAddress(address);
    if (parsed === undefined) return { allowed: false, address, range: 'not an IP address' };
    const carried = embeddedIPv4(parsed);
    const judged = carried ?? parsed;
    if (this.allow.some((rule) => cidrContains(rule.cidr, judged))) return { allowed: true };
    const candidates = carried === undefined ? [parsed] : [carried, parsed];
    for (const candidate of candidates) {
      const rule = this.deny.find((r) => cidrContains(r.cidr, candidate));
      if (rule !== undefined) return { allowed: false, address: candidate.text, range: `${rule.cidr.text} ${rule.label}` };
    }
    return { allowed: true };
  }

  /** Its description: the ranges hold BigInts, which JSON cannot write (a logged config would throw). */
  toJSON(): string {
    return this.describe();
  }

  /** One line for the start-up log: `default; denied also 10.9.0.0/16; allowed 10.0.0.5/32`. */
  describe(): string {
    const extraDeny = this.deny.filter((rule) => rule.label === 'RECEIVER_DENY').map((rule) => rule.cidr.text);
    const allow = this.allow.map((rule) => rule.cidr.text);
    return [this.preset, ...(extraDeny.length ? [`denied also ${extraDeny.join(', ')}`] : []), ...(allow.length ? [`allowed ${allow.join(', ')}`] : [])].join('; ');
  }
}

/**
 * The policy the settings describe. RECEIVER_POLICY is `default` (or unset) or `public-only`; RECEIVER_DENY and
 * RECEIVER_ALLOW are comma-separated CIDRs or addresses. Throws ReceiverPolicyError naming the variable and the
 * entry it cannot read.
 */
export function parseReceiverPolicy(settings: ReceiverPolicySettings = {}): ReceiverPolicy {
  const presetText = settings.RECEIVER_POLICY?.trim() || 'default';
  if (!(RECEIVER_POLICY_PRESETS as readonly string[]).includes(presetText)) {
    throw new ReceiverPolicyError(`RECEIVER_POLICY must be one of ${RECEIVER_POLICY_PRESETS.join(', ')}, got "${presetText}"`);
  }
  const preset = presetText as ReceiverPolicyPreset;
  const deny = [...ALWAYS_DENIED, ...(preset === 'public-only' ? PUBLIC_ONLY_DENIED : []), ...rangesFrom('RECEIVER_DENY', settings.RECEIVER_DENY)];
  return new ReceiverPolicy(preset, deny, rangesFrom('RECEIVER_ALLOW', settings.RECEIVER_ALLOW));
}

function rangesFrom(name: 'RECEIVER_DENY' | 'RECEIVER_ALLOW', raw: string | undefined): Rule[] {
  const entries = (raw ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  return entries.map((entry) => {
    const cidr = parseCidr(entry);
    if (cidr === undefined) {
      throw new ReceiverPolicyError(`${name} must be a comma-separated list of IP addresses or CIDRs (10.0.0.0/8, fd00::/8); "${entry}" is neither`);
    }
    return { cidr, label: name };
  });
}

/** The policy with no settings: what a process uses unless the operator says otherwise. */
export const DEFAULT_RECEIVER_POLICY = parseReceiverPolicy();
