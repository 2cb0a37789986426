import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { readProcessConfig } from '../env.js';
import { verifyPayloadHmac, verifyStandardWebhook } from '../delivery/verify.js';
import { createLogger } from '../logger.js';
import { startService, type Service } from '../service.js';

/**
 * `npm run demo`: the whole product end to end in a few seconds, with nothing to set up. A throwaway embedded
 * database, the real service on a loopback port, a real receiver that checks signatures the way an integrator's
 * would, and every call over real HTTP, so what it prints is what a newcomer would see doing it by hand.
 */

const EXPECTED_DELIVERIES = 5; // 2 newCase + 1 newMatch + 1 caseStatusChange + 1 ping
const WAIT_MS = 12_000;

/** What the receiver saw of one delivery. */
interface Received {
  eventType: string;
  webhookId: string;
  summary: string;
  hmacOk: boolean;
  standardOk: boolean;
}

/** A failure the demo explains itself: its message is the whole story, no stack needed. */
export class DemoError extends Error {
  override name = 'DemoError';
}

export async function runDemo(print: (line: string) => void = console.log): Promise<void> {
  // A fresh directory each run: the demo never touches ./data or a database someone cares about.
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'alert-webhooks-demo-'));
  const secret = randomBytes(24).toString('base64url');
  const received: Received[] = [];
  let service: Service | undefined;
  let receiver: Server | undefined;
  let step = 0;
  const say = (text: string) => print(`${++step}. ${text}`);

  try {
    say(`Starting the service on a throwaway embedded database (${dataDir})`);
    const adminPassword = randomBytes(18).toString('base64url');
    const config = readProcessConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      ADMIN_PASSWORD: adminPassword,
      ROLE: 'all',
      LOG_LEVEL: 'warn',
      PUBLIC_BASE_URL: 'http://localhost:3000',
    });
    service = await startService({ config, logger: createLogger('warn'), announce: () => {} });
    const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    print(`   API at ${base}`);

    say('Starting a receiver that checks X-Payload-HMAC and the Standard Webhooks signature of every delivery');
    receiver = createServer((req, res) => {
      // Verify the raw bytes as received: re-serialising parsed JSON may change them and break the signature.
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const hmacOk = verifyPayloadHmac(secret, raw, req.headers['x-payload-hmac']);
        const standardOk = verifyStandardWebhook(secret, raw, req.headers);
        let payload: Payload = {};
        try {
          payload = JSON.parse(raw.toString('utf8')) as Payload;
        } catch {
          // Recorded as "unparseable" below; the signature lines still say whether the bytes were ours.
        }
        received.push({ eventType: payload.eventType ?? 'unparseable', webhookId: String(req.headers['webhook-id']), summary: summarize(payload), hmacOk, standardOk });
        // Answer fast and with no body: the service only needs a 2xx to mark the delivery sent.
        res.writeHead(hmacOk && standardOk ? 204 : 401).end();
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    print(`   receiving at ${receiverUrl}`);

    // A tiny client for the API: JSON in and out, the session cookie kept, any non-2xx a clear failure.
    let cookie = '';
    const api = async <T = unknown>(method: 'GET' | 'POST', url: string, body?: unknown): Promise<T> => {
      const headers: Record<string, string> = cookie ? { cookie } : {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await request(`${base}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.body.text();
      if (res.statusCode < 200 || res.statusCode >= 300) throw new DemoError(`${method} ${url} answered ${res.statusCode}: ${text}`);
      const setCookie = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('aw.sid='));
      if (setCookie) cookie = setCookie.split(';')[0]!;
      return (text ? JSON.parse(text) : undefined) as T;
    };

    say('Signing in as admin (POST /api/auth/login) and keeping the aw.sid session cookie');
    await api('POST', '/api/auth/login', { usernameOrEmail: 'admin', password: adminPassword });
    if (!cookie) throw new DemoError('the login answered 200 but set no aw.sid cookie');

    // The default schedule sends once a minute; every second keeps the demo short.
    say("Sending due deliveries every second (POST /api/config webhooks.deliveryFrequency = '* * * * * *')");
    await api('POST', '/api/config', { path: 'webhooks', configuration: { deliveryFrequency: '* * * * * *' } });

    say('Creating data source "demo" and an alert on it');
    await api('POST', '/api/admin/sources', { key: 'demo', name: 'Demo graph' });
    const alert = await api<{ id: number }>('POST', '/api/admin/demo/alerts', { title: 'Shared phone numbers', description: 'Two clients share a phone' });
    print(`   alert #${alert.id}`);

    say('Registering a webhook for the receiver, with a secret (all events, any data source)');
    const webhook = await api<{ id: number }>('POST', '/api/admin/webhooks', { url: receiverUrl, secret });
    print(`   webhook #${webhook.id}`);

    // Two new targets and a repeat of the first (same IDs, another order): 2 newCase and 1 newMatch.
    say('Reporting 3 matches: two new targets and a repeat of the first');
    const { cases } = await api<{ cases: { id: number; created: boolean }[] }>('POST', `/api/admin/demo/alerts/${alert.id}/matches`, {
      matches: [
        { nodes: ['alice', 'bob'], edges: ['call-1'] },
        { nodes: ['carol', 'dave'], edges: ['call-2'] },
        { nodes: ['bob', 'alice'], edges: ['call-1'] },
      ],
    });
    for (const c of cases) print(`   case #${c.id}: ${c.created ? 'new case (newCase)' : 'new match on it (newMatch)'}`);

    say(`Confirming case #${cases[0]!.id} with a comment (caseStatusChange)`);
    await api('POST', `/api/demo/alerts/${alert.id}/cases/${cases[0]!.id}/action`, { action: 'confirm', comment: 'Checked with the bank' });

    // A ping is sent at once, whatever the schedule: the quickest way to check a receiver is reachable.
    say('Pinging the webhook (POST /api/admin/webhooks/:id/ping)');
    const ping = await api<{ status: string }>('POST', `/api/admin/webhooks/${webhook.id}/ping`);
    print(`   ping delivery: ${ping.status}`);

    say(`Waiting for the receiver to get all ${EXPECTED_DELIVERIES} deliveries (the schedule fires every second)`);
    const deadline = Date.now() + WAIT_MS;
    while (received.length < EXPECTED_DELIVERIES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));

    say(`The receiver got ${received.length} deliveries (in webhook-id order; they may arrive in any order):`);
    received.sort((a, b) => Number(a.webhookId) - Number(b.webhookId));
    for (const r of received) {
      const check = r.hmacOk && r.standardOk ? 'signature verified ✓' : `SIGNATURE FAILED ✗ (X-Payload-HMAC ${r.hmacOk ? 'ok' : 'bad'}, webhook-signature ${r.standardOk ? 'ok' : 'bad'})`;
      print(`   ${r.eventType.padEnd(16)} webhook-id ${r.webhookId.padEnd(3)} ${r.summary.padEnd(48)} ${check}`);
    }

    say('The webhook\'s deliveries as the API shows them (GET /api/admin/webhooks/:id/deliveries):');
    const list = await api<{ items: { id: number; status: string; attempts: number; payload: Payload }[] }>('GET', `/api/admin/webhooks/${webhook.id}/deliveries`);
    for (const d of list.items) print(`   delivery #${d.id}: ${d.payload.eventType ?? '?'}, ${d.status}, ${d.attempts} attempt(s)`);

    // Judge last, so that whatever did arrive has been shown before the verdict.
    const verified = received.filter((r) => r.hmacOk && r.standardOk).length;
    if (received.length < EXPECTED_DELIVERIES) {
      throw new DemoError(`only ${received.length} of ${EXPECTED_DELIVERIES} deliveries reached the receiver within ${WAIT_MS / 1000} s`);
    }
    if (verified !== received.length) throw new DemoError(`${received.length - verified} of ${received.length} deliveries failed signature verification`);
    print(`✓ ${verified} deliveries received and verified.`);
  } catch (err) {
    print(`✗ Demo failed: ${err instanceof Error ? err.message : String(err)}`);
    if (err instanceof DemoError) err.stack = `${err.name}: ${err.message}`;
    throw err;
  } finally {
    // Always tidy up, even after a failure: close connections, stop the service, delete the temp database.
    if (receiver) {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver!.close(() => resolve()));
    }
    await service?.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The payload fields the demo prints (docs/api.md, Events and payloads). */
interface Payload {
  eventType?: string;
  data?: {
    webhookId?: number;
    case?: { id: number; status?: string; target?: { nodes: string[]; edges: string[] } };
    user?: { username: string };
    comment?: string;
  };
}

function summarize(payload: Payload): string {
  const data = payload.data ?? {};
  if (payload.eventType === 'ping') return `ping of webhook #${data.webhookId}`;
  const kase = data.case;
  if (!kase) return '(no case)';
  if (kase.target) return `case #${kase.id}, target ${[...kase.target.nodes, ...kase.target.edges].join(',')}`;
  return `case #${kase.id} → ${kase.status} by ${data.user?.username ?? '?'}: "${data.comment ?? ''}"`;
}
