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

const EXPECTED_DELIVERIES = 9; // 2 newCase + 2 newMatch, then 3 newMatch after a client joins a shared phone, + 1 caseStatusChange + 1 ping

const SHARED_PHONE = 'MATCH (a:Client)-[:HAS_PHONE]->(p:Phone)<-[:HAS_PHONE]-(b:Client) WHERE a.id < b.id RETURN a, b, p, p.number AS phone';

/**
 * Clients, their phones and accounts, and transfers: alice and bob share one phone, carol, dave and erin another
 * (three pairs), the others none.
 */
const FRAUD_GRAPH = {
  summary: '8 clients, 6 phones, 8 accounts, 6 transfers',
  statements: [
    'CREATE NODE TABLE Client(id STRING, name STRING, PRIMARY KEY(id))',
    'CREATE NODE TABLE Phone(number STRING, PRIMARY KEY(number))',
    'CREATE NODE TABLE Account(iban STRING, PRIMARY KEY(iban))',
    'CREATE REL TABLE HAS_PHONE(FROM Client TO Phone)',
    'CREATE REL TABLE OWNS(FROM Client TO Account)',
    'CREATE REL TABLE TRANSFER(FROM Account TO Account, id STRING, amount DOUBLE)',
    "UNWIND ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi'] AS id CREATE (c:Client {id: id, name: upper(substring(id, 1, 1)) + substring(id, 2, 10)})-[:OWNS]->(:Account {iban: 'FR76-' + id})",
    "UNWIND ['555-0100', '555-0101', '555-0102', '555-0103', '555-0104', '555-0105'] AS n CREATE (:Phone {number: n})",
    "UNWIND [['alice', '555-0100'], ['bob', '555-0100'], ['carol', '555-0101'], ['dave', '555-0101'], ['erin', '555-0101'], ['frank', '555-0102'], ['grace', '555-0103'], ['heidi', '555-0104']] AS pair " +
      'MATCH (c:Client {id: pair[1]}), (p:Phone {number: pair[2]}) CREATE (c)-[:HAS_PHONE]->(p)',
    "UNWIND range(1, 6) AS i MATCH (a:Account {iban: 'FR76-' + ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'][i]}), (b:Account {iban: 'FR76-' + ['bob', 'carol', 'dave', 'erin', 'frank', 'grace'][i]}) " +
      "CREATE (a)-[:TRANSFER {id: 't-' + CAST(i AS STRING), amount: 1000.0 * i}]->(b)",
  ],
};
const WAIT_MS = 15_000;

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

    say('Creating data source "demo" with an embedded graph (Kùzu, files under DATA_DIR)');
    await api('POST', '/api/admin/sources', { key: 'demo', name: 'Demo fraud graph', graph: { vendor: 'embedded' } });

    say(`Building a small fraud graph with Cypher (POST /api/demo/graph/run/query): ${FRAUD_GRAPH.summary}`);
    for (const query of FRAUD_GRAPH.statements) await api('POST', '/api/demo/graph/run/query', { query });

    say('Registering a webhook for the receiver, with a secret (all events, any data source)');
    const webhook = await api<{ id: number }>('POST', '/api/admin/webhooks', { url: receiverUrl, secret });
    print(`   webhook #${webhook.id}`);

    say('Creating a Cypher alert: clients sharing a phone, one case per phone, run every hour');
    print(`   ${SHARED_PHONE}`);
    const alert = await api<{ id: number; nextRun: string }>('POST', '/api/admin/demo/alerts', {
      title: 'Shared phone numbers',
      description: 'Two clients share a phone',
      cron: '0 * * * *',
      queries: [{ name: 'clients sharing a phone', query: SHARED_PHONE, dialect: 'cypher' }],
      columns: [{ type: 'string', columnTitle: 'Phone', columnName: 'phone' }],
      target: 'p',
    });
    print(`   alert #${alert.id}, next scheduled run ${alert.nextRun}`);

    const runAndReport = async (what: string) => {
      say(what);
      await api('POST', `/api/admin/demo/alerts/${alert.id}/run`, { waitForRun: true });
      const { runs } = await api<{ runs: { matchesNew: number; matchesSeen: number; casesOpened: number; eventsEmitted: number }[] }>('GET', `/api/demo/alerts/${alert.id}`);
      const run = runs[0]!;
      print(`   ${run.matchesNew} new matches, ${run.matchesSeen} seen before, ${run.casesOpened} cases opened, ${run.eventsEmitted} events`);
      return run;
    };
    await runAndReport('Running the alert now (POST /api/admin/demo/alerts/:id/run {waitForRun: true})');
    const { cases } = await api<{ cases: { id: number; nodes: string[] }[] }>('GET', `/api/demo/alerts/${alert.id}/cases`);
    for (const c of cases) print(`   case #${c.id}: phone ${c.nodes.join(', ')}`);

    await runAndReport('Running it again over the same graph: nothing new, no event');
    say("Adding a client, ivan, on carol, dave and erin's phone 555-0101 (CREATE … -[:HAS_PHONE]->(p))");
    await api('POST', '/api/demo/graph/run/query', { query: "MATCH (p:Phone {number: '555-0101'}) CREATE (:Client {id: 'ivan', name: 'Ivan'})-[:HAS_PHONE]->(p)" });
    await runAndReport('Running it again: exactly the new matches (newMatch on the existing case)');

    const first = cases[cases.length - 1]!;
    say(`Confirming case #${first.id} with a comment (caseStatusChange)`);
    await api('POST', `/api/demo/alerts/${alert.id}/cases/${first.id}/action`, { action: 'confirm', comment: 'Checked with the bank' });

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
