import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, inject } from 'vitest';
import { initialPasswordPath } from '../../src/auth/initial-password.js';
import { readProcessConfig } from '../../src/env.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { decodeSecretsKey, keyringOf, type Keyring } from '../../src/secrets/keyring.js';
import { startService, type Service } from '../../src/service.js';
import { copyPgliteTemplate, createPgDatabase, dropPgDatabase, removeDir } from './databases.js';
import { TEST_SECRETS_KEY } from './processes.js';

export const ADMIN_PASSWORD = 'admin-password-1';

export interface TestDatabase {
  db: Database;
  kind: 'pglite' | 'postgres';
  /** PostgreSQL: the URL of this file's database. */
  url?: string;
  /** PGlite: this file's DATA_DIR. */
  dataDir?: string;
  dispose(): Promise<void>;
}

/** A database of this test file's own, migrated, cloned from the run's template. */
export async function openTestDatabase(): Promise<TestDatabase> {
  const template = inject('dbTemplate');
  if (template.kind === 'postgres') {
    const name = `aw_test_${randomBytes(6).toString('hex')}`;
    const url = await createPgDatabase(name, template.database);
    const db = await createDatabase({ databaseUrl: url, dataDir: '' });
    return {
      db,
      kind: 'postgres',
      url,
      async dispose() {
        await db.close();
        await dropPgDatabase(name);
      },
    };
  }
  const dataDir = copyPgliteTemplate(template.dataDir);
  const db = await createDatabase({ dataDir });
  return {
    db,
    kind: 'pglite',
    dataDir,
    async dispose() {
      await db.close();
      removeDir(dataDir);
    },
  };
}

/**
 * Where a service on `testDb` finds its secrets key: on PostgreSQL the suite's TEST_SECRETS_KEY (as the processes
 * runCli starts have it); embedded, the key file in the database's own DATA_DIR (made on first start, as in production,
 * and never in the working directory's ./data).
 */
export function secretsKeyEnv(testDb: TestDatabase): Record<string, string> {
  return testDb.kind === 'postgres' ? { SECRETS_KEY: TEST_SECRETS_KEY } : { DATA_DIR: testDb.dataDir! };
}

/** The keyring of TEST_SECRETS_KEY, for tests that call the webhook functions without a service. */
export function testKeyring(): Keyring {
  return keyringOf(decodeSecretsKey(TEST_SECRETS_KEY, 'TEST_SECRETS_KEY'));
}

export interface ApiAnswer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  // Tests read whatever the API answered: its shape is what they assert.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** Calls the real app through `inject`, as one caller (a session cookie, an API key, or nobody). */
export class ApiClient {
  constructor(
    readonly app: FastifyInstance,
    private readonly headers: Record<string, string> = {},
  ) {}

  async request(method: InjectOptions['method'], url: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<ApiAnswer> {
    const response = await this.app.inject({
      method,
      url,
      headers: { ...this.headers, ...extraHeaders },
      ...(body === undefined ? {} : typeof body === 'string' ? { payload: body } : { payload: body as object }),
    });
    const text = response.body;
    let parsed: unknown = text;
    if (String(response.headers['content-type'] ?? '').includes('application/json') && text) parsed = JSON.parse(text);
    return { status: response.statusCode, headers: response.headers, body: parsed };
  }

  get = (url: string) => this.request('GET', url);
  post = (url: string, body?: unknown) => this.request('POST', url, body ?? {});
  patch = (url: string, body: unknown) => this.request('PATCH', url, body);
  delete = (url: string) => this.request('DELETE', url);
}

export async function signIn(app: FastifyInstance, usernameOrEmail: string, password: string): Promise<ApiClient> {
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { usernameOrEmail, password } });
  if (response.statusCode !== 200) throw new Error(`sign-in of ${usernameOrEmail} failed: ${response.statusCode} ${response.body}`);
  const cookie = response.cookies.find((c) => c.name === 'aw.sid');
  return new ApiClient(app, { cookie: `aw.sid=${cookie!.value}` });
}

export interface TestService {
  service: Service;
  app: FastifyInstance;
  db: Database;
  testDb: TestDatabase;
  /** Signed in as the bootstrap admin. */
  admin: ApiClient;
  /** Not signed in. */
  anonymous: ApiClient;
  /** Creates a user and signs in as them. */
  userClient(username: string, groups?: number[]): Promise<ApiClient>;
  close(): Promise<void>;
}

export interface TestServiceOptions {
  env?: Record<string, string>;
  /** Reuse a database (a restart); otherwise the file gets a fresh one, disposed on close. */
  testDb?: TestDatabase;
  announce?: (line: string) => void;
  /** Where the service logs (default: silent, or LOG_LEVEL to stdout). */
  logger?: Logger;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const testDb = options.testDb ?? (await openTestDatabase());
  // On PostgreSQL, DATA_DIR holds only the embedded graphs: a folder of this service's own, not the working directory's ./data.
  const graphDir = testDb.kind === 'postgres' && !options.env?.DATA_DIR ? mkdtempSync(path.join(tmpdir(), 'aw-graphs-')) : undefined;
  const config = readProcessConfig({
    ADMIN_PASSWORD,
    PUBLIC_BASE_URL: 'https://lke.example.com',
    // No schedules unless a test asks (ROLE=all): a test drives the worker itself, so nothing is sent behind its back.
    ROLE: 'api',
    // Small: a test's graphs are small, and several services run at once.
    GRAPH_MEMORY_MB: '64',
    ...(graphDir ? { DATA_DIR: graphDir } : {}),
    ...secretsKeyEnv(testDb),
    ...options.env,
  });
  const announced: string[] = [];
  const service = await startService({
    config,
    logger: options.logger ?? createLogger(process.env.LOG_LEVEL ?? 'silent'),
    db: testDb.db,
    announce: (line) => {
      announced.push(line);
      options.announce?.(line);
    },
  });
  // A generated admin password is in DATA_DIR (the line printed says where), or printed where that cannot be written.
  const adminPassword = config.adminPassword ?? readGeneratedPassword(config.dataDir, announced.join('\n'));
  const admin = await signIn(service.app, 'admin', adminPassword);
  return {
    service,
    app: service.app,
    db: testDb.db,
    testDb,
    admin,
    anonymous: new ApiClient(service.app),
    async userClient(username, groups = [2]) {
      const password = `${username}-password`;
      const created = await admin.post('/api/admin/users', { username, email: `${username}@example.com`, password, groups });
      if (created.status !== 201) throw new Error(`creating ${username} failed: ${JSON.stringify(created.body)}`);
      return signIn(service.app, username, password);
    },
    async close() {
      await service.close();
      if (!options.testDb) await testDb.dispose();
      if (graphDir) removeDir(graphDir);
    },
  };
}

function readGeneratedPassword(dataDir: string, printed: string): string {
  const file = initialPasswordPath(dataDir);
  if (printed.includes(file)) return readFileSync(file, 'utf8').trim();
  return /password (\S+)/.exec(printed)?.[1] ?? '';
}

/** A database for the enclosing `describe` (or file), as `openTestDatabase`: opened before its tests, disposed after. */
export function useTestDatabase(): TestDatabase {
  const opened = {} as TestDatabase;
  beforeAll(async () => {
    Object.assign(opened, await openTestDatabase());
  });
  afterAll(async () => opened.dispose?.());
  return opened;
}

/**
 * A service for the enclosing `describe` (or file): started before its tests, closed after them. The object answered
 * is filled in when the service has started, so read it inside tests and hooks only.
 */
export function useTestService(options: TestServiceOptions = {}): TestService {
  const started = {} as TestService;
  beforeAll(async () => {
    Object.assign(started, await startTestService(options));
  });
  afterAll(async () => started.close?.());
  return started;
}
