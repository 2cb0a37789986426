import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildService, type ServiceBuild } from '../../bench/lib/build.js';
import { removeDir } from '../support/databases.js';
import { stopCli, waitUntil, type Finished } from '../support/processes.js';

export const ADMIN_PASSWORD = 'console-admin-password';

/** A port nobody listens on now (the service takes it a moment later; loopback only). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RunningService {
  baseUrl: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * The real compiled service, as `npm start` runs it: scripts/build.mjs (server and console) into a build of this
 * run's own, then `node dist/cli.js serve` on a free loopback port with the embedded database in a fresh DATA_DIR.
 */
export async function startCompiledService(): Promise<RunningService> {
  const build: ServiceBuild = await buildService();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aw-console-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, [build.cli, 'serve'], {
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: baseUrl, ADMIN_PASSWORD, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const finished = new Promise<Finished>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout: output, stderr: '' })));
  const stop = async () => {
    await stopCli({ child, finished });
    removeDir(dataDir);
    build.dispose();
  };
  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`the service exited:\n${output}`);
        return fetch(`${baseUrl}/health`).then((r) => r.ok, () => false);
      },
      'the compiled service answers /health',
      60_000,
      200,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { baseUrl, output: () => output, stop };
}

/**
 * Debian's Chromium, kept off the network: no background requests, no component or sync updates. Playwright gives
 * each launch a fresh temporary profile (user data dir), and each context its own cookies.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export async function newContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB', timezoneId: 'UTC' });
  context.setDefaultTimeout(15_000);
  return context;
}

/** Signs `page` in as the admin through the sign-in form, and waits for the webhooks page it lands on. */
export async function signInAsAdmin(page: Page, baseUrl: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel('Username or email').fill('admin');
  await page.getByLabel('Password').fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}/webhooks`);
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
}

/** The public API, as a script would call it: a session cookie from POST /api/auth/login. */
export class ApiSession {
  private constructor(
    private readonly baseUrl: string,
    private readonly cookie: string,
  ) {}

  static async signIn(baseUrl: string, usernameOrEmail: string, password: string): Promise<ApiSession> {
    const response = await fetch(`${baseUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usernameOrEmail, password }) });
    if (response.status !== 200) throw new Error(`sign-in answered ${response.status}: ${await response.text()}`);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('aw.sid='))!.split(';')[0]!;
    return new ApiSession(baseUrl, cookie);
  }

  // The tests read whatever the API answered.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { cookie: this.cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }
}
