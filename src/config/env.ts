import path from 'node:path';

export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];

/** Process settings, read from the environment once at start and frozen (contract §6). */
export interface ProcessConfig {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly port: number;
  readonly host: string;
  readonly publicBaseUrl: string;
  readonly adminEmail: string;
  readonly adminPassword: string | undefined;
  readonly logLevel: string;
  readonly role: Role;
  readonly bodyLimitBytes: number;
  readonly sessionTtlMs: number;
  /** Attempts in flight per process, and per webhook within it. */
  readonly deliveryConcurrency: number;
  readonly deliveryConcurrencyPerWebhook: number;
  /** How long a claim is held; unset means derived from requestTimeoutMs (see DeliveryWorker.leaseMs). */
  readonly deliveryLeaseMs: number | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function readProcessConfig(env: NodeJS.ProcessEnv = process.env): ProcessConfig {
  const port = intFrom(env, 'PORT', 3000, 0, 65535);
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
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
    dataDir: path.resolve(env.DATA_DIR?.trim() || './data'),
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    publicBaseUrl,
    adminEmail: env.ADMIN_EMAIL?.trim() || 'admin@localhost',
    adminPassword: env.ADMIN_PASSWORD || undefined,
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    role,
    bodyLimitBytes: intFrom(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    sessionTtlMs: intFrom(env, 'SESSION_TTL_MS', 12 * 3600_000, 60_000, 365 * 86400_000),
    deliveryConcurrency: intFrom(env, 'DELIVERY_CONCURRENCY', 64, 1, 4096),
    deliveryConcurrencyPerWebhook: intFrom(env, 'DELIVERY_CONCURRENCY_PER_WEBHOOK', 16, 1, 4096),
    deliveryLeaseMs: env.DELIVERY_LEASE_MS?.trim() ? intFrom(env, 'DELIVERY_LEASE_MS', 0, 1000, 3_600_000) : undefined,
  });
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

/** A URL fit for a message: the password replaced. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}
