import type { KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import path from 'node:path';
import { DEFAULT_POOL_SIZE, isPostgresUrl } from './db/database.js';
import { parseReceiverPolicy, ReceiverPolicyError, type ReceiverPolicy } from './network/receiver-policy.js';
import { decodeSecretsKey, SecretsKeyError } from './secrets/keyring.js';

export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];

/** Process settings, read from the environment once at start and frozen (README.md, Configuration). */
export interface ProcessConfig {
  readonly databaseUrl: string | undefined;
  /** PostgreSQL connections this process keeps (the LISTEN and health connections are besides these). */
  readonly databasePoolSize: number;
  readonly dataDir: string;
  readonly port: number;
  readonly host: string;
  /** Where a ROLE=worker process answers its health checks and metrics; 0 = no listener. */
  readonly metricsPort: number;
  /** METRICS_TOKEN: the bearer token a scraper off this host may send for GET /metrics (unset: none). */
  readonly metricsToken: string | undefined;
  readonly publicBaseUrl: string;
  readonly adminEmail: string;
  readonly adminPassword: string | undefined;
  readonly logLevel: string;
  readonly role: Role;
  readonly bodyLimitBytes: number;
  /** REQUEST_TIMEOUT_MS: a request's headers and body must arrive within this, or it is answered 408 and closed. */
  readonly requestTimeoutMs: number;
  /** MAX_CONNECTIONS_PER_ADDRESS: connections one client address (IPv6: one /64) may hold open; 0 = no limit. */
  readonly maxConnectionsPerAddress: number;
  readonly sessionTtlMs: number;
  /** Attempts in flight per process, and per webhook within it. */
  readonly deliveryConcurrency: number;
  readonly deliveryConcurrencyPerWebhook: number;
  /** How long a claim is held; unset means derived from requestTimeoutMs (see DeliveryWorker.leaseMs). */
  readonly deliveryLeaseMs: number | undefined;
  /** `deliveryFrequency: immediate`: how often a worker looks for due deliveries it was not told of; unset: 1 s. */
  readonly deliverySweepMs: number | undefined;
  /**
   * Which peers may tell the client's address and protocol (`X-Forwarded-For`, `X-Forwarded-Proto`), as Fastify's
   * `trustProxy` takes it: false (none), true (every peer), proxy addresses and CIDRs, or a hop count as a function.
   */
  readonly trustProxy: TrustProxy;
  /** Failed sign-ins one client address may make per 15 minutes before it is answered 429 (see login-throttle.ts). */
  readonly loginFailuresPerAddress: number;
  /** Which receiver addresses deliveries may reach: RECEIVER_POLICY, RECEIVER_DENY, RECEIVER_ALLOW. */
  readonly receiverPolicy: ReceiverPolicy;
  /**
   * SECRETS_KEY, SECRETS_KEY_FILE (an absolute path) and SECRETS_KEY_PREVIOUS: the keys webhook secrets are sealed
   * with, checked for form here (base64 of 32 bytes) and held as KeyObjects, which print no key material. Which
   * key a process uses, and the embedded database's key file, are decided at start by loadKeyring.
   */
  readonly secretsKey: KeyObject | undefined;
  readonly secretsKeyFile: string | undefined;
  readonly secretsKeyPrevious: KeyObject | undefined;
  /** GRAPH_MEMORY_MB: the buffer pool of each embedded graph (Kùzu's own default is most of the machine's memory). */
  readonly graphBufferPoolBytes: number;
  /**
   * ALERTS_MAX_MATCHES_LIMIT, ALERTS_MAX_RUNTIME_LIMIT_MS: the most an alert may ask for (LKE's maxMatchesLimit,
   * maxRuntimeLimit); ALERTS_MIN_INTERVAL_MS: the least time between two scheduled runs of an alert.
   */
  readonly alertLimits: { maxMatches: number; maxRuntimeMs: number; minIntervalMs: number };
}

export type TrustProxy = boolean | string[] | TrustHops;
/** Trusts the `hops` nearest peers, whoever they are: `(address, hop) => hop < hops`. */
export type TrustHops = ((address: string, hop: number) => boolean) & { readonly hops: number };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function readProcessConfig(env: NodeJS.ProcessEnv = process.env): ProcessConfig {
  // Read where the embedded graphs start (graph/embedded/confinement.ts); checked here so a misspelt value stops the start.
  const confinement = env.GRAPH_CONFINEMENT?.trim();
  if (confinement && !['auto', 'required', 'off'].includes(confinement)) throw new ConfigError(`GRAPH_CONFINEMENT must be auto, required or off, got "${confinement}"`);
  const port = intFrom(env, 'PORT', 3000, 0, 65535);
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !isPostgresUrl(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must be a postgres:// URL (or unset for the embedded database), got "${redactUrl(databaseUrl)}"`);
  }
  const publicBaseUrl = (env.PUBLIC_BASE_URL?.trim() || `http://localhost:${port}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(publicBaseUrl)) {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute http(s) URL, got "${publicBaseUrl}"`);
  }
  const role = (env.ROLE?.trim() || 'all') as Role;
  if (!ROLES.includes(role)) throw new ConfigError(`ROLE must be one of ${ROLES.join(', ')}, got "${env.ROLE}"`);
  return Object.freeze({
    databaseUrl,
    databasePoolSize: intFrom(env, 'DATABASE_POOL_SIZE', DEFAULT_POOL_SIZE, 1, 1000),
    dataDir: path.resolve(env.DATA_DIR?.trim() || './data'),
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    metricsPort: intFrom(env, 'METRICS_PORT', 9464, 0, 65535),
    metricsToken: metricsTokenFrom(env.METRICS_TOKEN),
    publicBaseUrl,
    adminEmail: env.ADMIN_EMAIL?.trim() || 'admin@localhost',
    adminPassword: env.ADMIN_PASSWORD || undefined,
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    role,
    bodyLimitBytes: intFrom(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    requestTimeoutMs: intFrom(env, 'REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    maxConnectionsPerAddress: intFrom(env, 'MAX_CONNECTIONS_PER_ADDRESS', 256, 0, 1_000_000),
    sessionTtlMs: intFrom(env, 'SESSION_TTL_MS', 12 * 3600_000, 60_000, 365 * 86400_000),
    deliveryConcurrency: intFrom(env, 'DELIVERY_CONCURRENCY', 64, 1, 4096),
    deliveryConcurrencyPerWebhook: intFrom(env, 'DELIVERY_CONCURRENCY_PER_WEBHOOK', 16, 1, 4096),
    deliveryLeaseMs: env.DELIVERY_LEASE_MS?.trim() ? intFrom(env, 'DELIVERY_LEASE_MS', 0, 1000, 3_600_000) : undefined,
    deliverySweepMs: env.DELIVERY_SWEEP_MS?.trim() ? intFrom(env, 'DELIVERY_SWEEP_MS', 0, 100, 86_400_000) : undefined,
    trustProxy: trustProxyFrom(env.TRUST_PROXY),
    loginFailuresPerAddress: intFrom(env, 'LOGIN_FAILURES_PER_ADDRESS', 50, 1, 100_000),
    receiverPolicy: receiverPolicyFrom(env),
    ...secretsKeysFrom(env),
    graphBufferPoolBytes: intFrom(env, 'GRAPH_MEMORY_MB', 256, 16, 1024 * 1024) * 1024 * 1024,
    alertLimits: {
      maxMatches: intFrom(env, 'ALERTS_MAX_MATCHES_LIMIT', 5000, 1, 10_000_000),
      maxRuntimeMs: intFrom(env, 'ALERTS_MAX_RUNTIME_LIMIT_MS', 600_000, 1000, 86_400_000),
      // A minute: every 5-field CRON's finest grain. Each run is a row of history and a turn of the graph's threads;
      // a CRON with seconds made one a second (86,400 a day) of an alert (docs/operations.md, "Alerts").
      minIntervalMs: intFrom(env, 'ALERTS_MIN_INTERVAL_MS', 60_000, 1000, 86_400_000),
    },
  });
}

function receiverPolicyFrom(env: NodeJS.ProcessEnv): ReceiverPolicy {
  try {
    return parseReceiverPolicy({ RECEIVER_POLICY: env.RECEIVER_POLICY, RECEIVER_DENY: env.RECEIVER_DENY, RECEIVER_ALLOW: env.RECEIVER_ALLOW });
  } catch (err) {
    if (err instanceof ReceiverPolicyError) throw new ConfigError(err.message);
    throw err;
  }
}

function secretsKeysFrom(env: NodeJS.ProcessEnv): Pick<ProcessConfig, 'secretsKey' | 'secretsKeyFile' | 'secretsKeyPrevious'> {
  const key = env.SECRETS_KEY?.trim() || undefined;
  const file = env.SECRETS_KEY_FILE?.trim() || undefined;
  const previous = env.SECRETS_KEY_PREVIOUS?.trim() || undefined;
  if (key !== undefined && file !== undefined) throw new ConfigError('SECRETS_KEY and SECRETS_KEY_FILE are both set: give the key one way');
  try {
    return {
      secretsKey: key === undefined ? undefined : decodeSecretsKey(key, 'SECRETS_KEY'),
      secretsKeyFile: file === undefined ? undefined : path.resolve(file),
      secretsKeyPrevious: previous === undefined ? undefined : decodeSecretsKey(previous, 'SECRETS_KEY_PREVIOUS'),
    };
  } catch (err) {
    if (err instanceof SecretsKeyError) throw new ConfigError(err.message);
    throw err;
  }
}

// A guessable token would open the metrics to anyone who can reach the port.
const MIN_METRICS_TOKEN_LENGTH = 16;

function metricsTokenFrom(raw: string | undefined): string | undefined {
  const token = raw?.trim() || undefined;
  if (token !== undefined && token.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(`METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32), got ${token.length}`);
  }
  return token;
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

// Names proxy-addr (behind Fastify's trustProxy) knows for address ranges.
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY`: unset or `false` trusts no proxy, so the client is the socket's peer and forwarded headers are
 * ignored (the safe default: any client can write them). `true` trusts every peer, and a number that many hops in
 * front of the service, whoever they are: both only for a service reachable solely through its proxies, or any
 * client can choose the address it is counted under and claim https. Otherwise a comma-separated
 * list of proxy addresses or CIDRs (or `loopback`, `linklocal`, `uniquelocal`): forwarded headers count only from them.
 */
export function trustProxyFrom(raw: string | undefined): TrustProxy {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 100) throw new ConfigError(`TRUST_PROXY as a hop count must be at most 100, got "${value}"`);
    // Not Fastify's own number form: since 5.12 it trusts nothing for a number (it cannot check the peer), which would
    // make this setting silently do nothing. A hop count trusts the nearest `hops` peers, as `true` trusts all of them.
    return hops === 0 ? false : Object.assign((_address: string, hop: number) => hop < hops, { hops });
  }
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (!isProxyAddress(entry)) {
      throw new ConfigError(
        `TRUST_PROXY must be false, true, a hop count, or a comma-separated list of proxy addresses or CIDRs; "${entry}" is none of these`,
      );
    }
  }
  return entries;
}

function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const prefix = entry.slice(slash + 1);
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** A URL fit for a message: the password replaced. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}
