import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../cli/cli-support.js';
import { createPgDatabase, dropPgDatabase } from '../support/databases.js';
import { REPO_ROOT, TEST_SECRETS_KEY, waitUntil, type CliRun, type Finished } from '../support/processes.js';
import { TestReceiver, answer } from '../support/receiver.js';

// What an operator deploys, tried as they would: the Dockerfile's steps run by scripts/image-steps.mjs in a clean
// copy of the repository (no engine here to build the image itself), the processes of compose.yaml started from the
// result with compose's commands and environment on this machine's PostgreSQL, and the npm package, packed from the
// same build and installed into an empty folder with its production dependencies only.
// Once per run (the `package` project in vitest.config.ts): two installs of the dependencies take a minute or two.

interface Image {
  dir: string;
  workdir: string;
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  user?: string;
  healthcheck: string[];
  stopsignal?: string;
  expose?: number[];
}

interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
  deploy?: { replicas?: number };
  secrets?: string[];
  depends_on?: Record<string, { condition: string }>;
}

/**
 * A process started like `runCli`, from any command and folder (the image's or the install's), in a process group of
 * its own: `npx` runs the command in a child, which `stopGroup` reaches too.
 */
function start(command: string[], cwd: string, env: Record<string, string>): CliRun {
  const child = spawn(command[0]!, command.slice(1), { cwd, env: { PATH: process.env.PATH!, HOME: os.tmpdir(), ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const finished = new Promise<Finished>((resolve) =>
    child.on('close', (code, signal) => {
      exited = true;
      resolve({ code, signal, stdout, stderr });
    }),
  );
  const output = () => stdout + stderr;
  const waitForOutput = async (pattern: RegExp, timeoutMs = 60_000) => {
    await waitUntil(() => pattern.test(output()) || exited, `${command.join(' ')} prints ${pattern}`, timeoutMs);
    if (!pattern.test(output())) throw new Error(`${command.join(' ')} exited before printing ${pattern}:\n${output()}`);
  };
  return { child, finished, output, waitForOutput };
}

/** Sends `signal` to the process group of `run` and waits for it to end (SIGKILL to the group after 30 s). */
async function stopGroup(run: CliRun, signal: NodeJS.Signals = 'SIGTERM'): Promise<Finished> {
  const kill = (sig: NodeJS.Signals) => {
    try {
      process.kill(-run.child.pid!, sig);
    } catch {
      // the group is gone
    }
  };
  kill(signal);
  const timer = setTimeout(() => kill('SIGKILL'), 30_000);
  try {
    return await run.finished;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a command to its end and answers what it printed; fails the test with its output when it fails. */
async function run(command: string[], cwd: string, env: Record<string, string>): Promise<string> {
  const finished = await start(command, cwd, env).finished;
  const output = finished.stdout + finished.stderr;
  expect(finished.code, `${command.join(' ')}:\n${output}`).toBe(0);
  return finished.stdout;
}

async function json(base: string, method: string, url: string, cookie: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe('the container image, the compose processes and the npm package', () => {
  const work = mkdtempSync(path.join(os.tmpdir(), 'aw-ship-'));
  const databases: string[] = [];
  const processes: CliRun[] = [];
  let image: Image;
  // A copy of the npm cache's settings: the installs below take what `npm ci` put in the cache before the network.
  const npmEnv = { npm_config_prefer_offline: 'true', npm_config_cache: process.env.npm_config_cache ?? path.join(os.homedir(), '.npm'), npm_config_update_notifier: 'false' };

  async function freshDatabase(): Promise<string> {
    const name = `aw_ship_${randomBytes(5).toString('hex')}`;
    databases.push(name);
    return createPgDatabase(name);
  }

  beforeAll(async () => {
    const steps = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/image-steps.mjs'), '--out', path.join(work, 'image')], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...npmEnv },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(steps.status, steps.stderr).toBe(0);
    image = JSON.parse(steps.stdout.trim().split('\n').at(-1)!) as Image;
  }, 600_000);

  afterAll(async () => {
    for (const p of processes) await stopGroup(p, 'SIGKILL');
    for (const name of databases) await dropPgDatabase(name);
    rmSync(work, { recursive: true, force: true });
  });

  it('builds an image of the compiled service and its production dependencies only, run as a user, with a health check', () => {
    expect(image.entrypoint).toEqual(['node', 'dist/cli.js']);
    expect(image.cmd).toEqual(['serve']);
    expect(image.user).toBe('node');
    expect(image.stopsignal).toBe('SIGTERM');
    expect(image.healthcheck).toEqual(['node', 'dist/cli.js', 'healthcheck']);
    expect(image.env).toMatchObject({ NODE_ENV: 'production', DATA_DIR: '/app/data' });
    expect(readdirSync(image.workdir).sort()).toEqual(['data', 'dist', 'node_modules', 'package.json']);
    expect(existsSync(path.join(image.workdir, 'dist/public/index.html'))).toBe(true);
    // Production dependencies only: a dev dependency of the build is not there, a runtime one is.
    expect(existsSync(path.join(image.workdir, 'node_modules/vitest'))).toBe(false);
    expect(existsSync(path.join(image.workdir, 'node_modules/typescript'))).toBe(false);
    expect(existsSync(path.join(image.workdir, 'node_modules/fastify'))).toBe(true);
  });

  it('runs compose.yaml on PostgreSQL: the migration, one API and two workers share the deliveries, none twice, and stop on SIGTERM', async () => {
    const compose = parse(readFileSync(path.join(REPO_ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
    const { migrate, api, worker } = compose.services as Record<'migrate' | 'api' | 'worker', ComposeService>;
    expect(worker.deploy?.replicas).toBe(2);
    expect(api.depends_on?.migrate?.condition).toBe('service_completed_successfully');

    // Where compose gives each container its own network, volume and secret file, one machine gives each process its
    // own port, DATA_DIR and key file; everything else is compose's.
    const databaseUrl = await freshDatabase();
    const keyFile = path.join(work, 'secrets_key');
    writeFileSync(keyFile, `${TEST_SECRETS_KEY}\n`, { mode: 0o600 });
    const environment = async (service: ComposeService, name: string): Promise<Record<string, string>> => {
      const env: Record<string, string> = { ...image.env, ...service.environment };
      expect(env.SECRETS_KEY_FILE, `${name} reads the key from its secret`).toBe('/run/secrets/secrets_key');
      const dataDir = path.join(work, `data-${name}`);
      mkdirSync(dataDir);
      return { ...env, DATABASE_URL: databaseUrl, SECRETS_KEY_FILE: keyFile, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(await freePort()), METRICS_PORT: String(await freePort()) };
    };
    const command = (service: ComposeService) => [...image.entrypoint, ...(service.command ?? image.cmd)];

    const migrated = await run(command(migrate), image.workdir, await environment(migrate, 'migrate'));
    expect(migrated).toMatch(/migration/i);

    const apiEnv = await environment(api, 'api');
    expect(apiEnv.ROLE).toBe('api');
    const apiProcess = start(command(api), image.workdir, apiEnv);
    processes.push(apiProcess);
    const workers: { run: CliRun; env: Record<string, string> }[] = [];
    for (let i = 0; i < worker.deploy!.replicas!; i++) {
      const env = await environment(worker, `worker-${i}`);
      expect(env.ROLE).toBe('worker');
      const started = start(command(worker), image.workdir, env);
      processes.push(started);
      workers.push({ run: started, env });
    }
    await apiProcess.waitForOutput(/alert-webhooks is serving/);
    for (const w of workers) await w.run.waitForOutput(/alert-webhooks worker is running/);
    // The image's HEALTHCHECK, run in each container's environment: the API port for the API, METRICS_PORT for a worker.
    for (const env of [apiEnv, ...workers.map((w) => w.env)]) await run(image.healthcheck, image.workdir, env);

    // The first admin's password: a one-line notice in the API's output, the password in its DATA_DIR.
    const passwordFile = path.join(apiEnv.DATA_DIR!, 'initial-admin-password');
    expect(apiProcess.output()).toContain(passwordFile);
    const password = readFileSync(passwordFile, 'utf8').trim();
    expect(apiProcess.output()).not.toContain(password);
    const base = `http://127.0.0.1:${apiEnv.PORT}`;
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usernameOrEmail: 'admin', password }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;

    // Deliveries go out as soon as they are recorded; each takes the receiver 20 ms, so both workers get some.
    const receiver = await TestReceiver.start();
    receiver.behaviour = (_request, _index, response) => void setTimeout(() => answer(204)(_request, _index, response), 20);
    try {
      expect((await json(base, 'POST', '/api/config', cookie, { path: 'webhooks.deliveryFrequency', configuration: 'immediate' })).status).toBe(204);
      expect((await json(base, 'POST', '/api/admin/sources', cookie, { key: 'ship', name: 'Ship' })).status).toBe(201);
      // The image's layout (dist/ and the production node_modules under /app) runs its embedded graph confined.
      expect(apiProcess.output()).toMatch(/embedded graphs: each Kùzu process confined by Landlock/);
      expect((await json(base, 'POST', '/api/admin/sources', cookie, { key: 'shipgraph', name: 'Ship graph', graph: { vendor: 'embedded' } })).status).toBe(201);
      const graphAnswer = await json(base, 'POST', '/api/shipgraph/graph/run/query', cookie, { query: 'RETURN 1 AS one' });
      expect(graphAnswer.status, JSON.stringify(graphAnswer.body)).toBe(200);
      const alert = await json(base, 'POST', '/api/admin/ship/alerts', cookie, { title: 'Shipped' });
      expect((await json(base, 'POST', '/api/admin/webhooks', cookie, { url: receiver.url, secret: 'compose-secret-0123456789' })).status).toBe(201);
      const matches = Array.from({ length: 300 }, (_, i) => ({ nodes: [`n${i}`], edges: [] }));
      expect((await json(base, 'POST', `/api/admin/ship/alerts/${alert.body.id as number}/matches`, cookie, { matches })).status).toBe(200);
      await receiver.waitFor(300, 60_000);
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      expect(new Set(ids).size).toBe(300);

      // Who sent what: each worker's own count of sent attempts, on its METRICS_PORT (counted once the answer is
      // read, a moment after the receiver counted the request).
      const sentByWorker = () =>
        Promise.all(
          workers.map(async ({ env }) => {
            const text = await (await fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`)).text();
            return [...text.matchAll(/^webhook_delivery_attempts_total\{[^}]*outcome="sent"[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
          }),
        );
      let sentBy: number[] = [];
      await waitUntil(async () => (sentBy = await sentByWorker()).reduce((a, b) => a + b, 0) >= 300, 'the workers counted 300 sent', 15_000);
      expect(sentBy.reduce((a, b) => a + b, 0)).toBe(300);
      for (const sent of sentBy) expect(sent, `each worker sent some: ${sentBy.join(' and ')}`).toBeGreaterThan(0);
      // The API process serves the API and sends nothing.
      expect(await (await fetch(`${base}/metrics`)).text()).not.toMatch(/^webhook_delivery_attempts_total\{/m);
    } finally {
      await receiver.close();
    }

    // docker stop: SIGTERM, and each process ends by itself, cleanly.
    for (const p of [apiProcess, ...workers.map((w) => w.run)]) {
      const ended = await stopGroup(p);
      expect(ended.signal, p.output()).toBeNull();
      expect(ended.code, p.output()).toBe(0);
    }
  });

  it('packs a package that, installed into an empty folder with production dependencies only, migrates, serves, resets a password and rekeys', async () => {
    // The package of the build the image was made from (npm pack's prepack step builds it in a checkout).
    const packageJson = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(packageJson.scripts.prepack).toContain('scripts/build.mjs');
    const built = path.join(image.dir, '..', 'build', 'src');
    const packed = await run(['npm', 'pack', '--ignore-scripts', '--pack-destination', work], built, { ...npmEnv });
    const tarball = path.join(work, packed.trim().split('\n').at(-1)!);

    const app = path.join(work, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), '{"private": true}\n');
    await run(['npm', 'install', '--omit=dev', '--no-audit', '--no-fund', tarball], app, npmEnv);
    expect(existsSync(path.join(app, 'node_modules/vitest'))).toBe(false);
    expect(existsSync(path.join(app, 'node_modules/alert-webhooks/dist/public/index.html'))).toBe(true);
    expect(existsSync(path.join(app, 'node_modules/alert-webhooks/LICENSE'))).toBe(true);

    const databaseUrl = await freshDatabase();
    const env = { ...npmEnv, DATABASE_URL: databaseUrl, SECRETS_KEY: TEST_SECRETS_KEY, DATA_DIR: path.join(work, 'app-data'), LOG_LEVEL: 'info' };
    const npx = (...args: string[]) => ['npx', '--no-install', 'alert-webhooks', ...args];
    expect(await run(npx('--version'), app, env)).toMatch(/^\d+\.\d+\.\d+/);
    expect(await run(npx('migrate'), app, env)).toMatch(/migration/i);

    const port = await freePort();
    const served = start(npx('serve'), app, { ...env, HOST: '127.0.0.1', PORT: String(port), ROLE: 'all' });
    processes.push(served);
    await served.waitForOutput(/alert-webhooks is serving/);
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    expect(await (await fetch(`${base}/`)).text()).toContain('<div id="app">');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^alert_webhooks_build_info\{version="\d+\.\d+\.\d+",node_version="v20\.[^"]+"\} 1$/m);
    // A webhook, so rekey has a secret to seal again.
    const password = readFileSync(path.join(env.DATA_DIR, 'initial-admin-password'), 'utf8').trim();
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usernameOrEmail: 'admin', password }) });
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    expect((await json(base, 'POST', '/api/admin/webhooks', cookie, { url: 'http://127.0.0.1:9/hook', secret: 'package-secret-0123456789' })).status).toBe(201);
    // SIGTERM reaches the service through npx: it drains and ends.
    await stopGroup(served);
    expect(served.output()).toContain('stopping: finishing in-flight work');

    const reset = await run(npx('admin', 'reset-password', 'admin'), app, env);
    expect(reset).toContain('New password:');
    // The first password is replaced: its file goes.
    expect(existsSync(path.join(env.DATA_DIR, 'initial-admin-password'))).toBe(false);
    const newKey = randomBytes(32).toString('base64');
    expect(await run(npx('rekey'), app, { ...env, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY })).toMatch(/1 secret re-sealed/);

    // The receiver side, as a receiver imports it: alert-webhooks/verify.
    const verified = await run(
      [
        process.execPath,
        '--input-type=module',
        '-e',
        "import { createHmac } from 'node:crypto'; import { verifyPayloadHmac } from 'alert-webhooks/verify'; const body = '{}'; console.log(verifyPayloadHmac('s', body, createHmac('sha256', 's').update(body).digest('hex')), verifyPayloadHmac('s', body, '00'));",
      ],
      app,
      env,
    );
    expect(verified.trim()).toBe('true false');
  });
});
