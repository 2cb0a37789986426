/**
 * A minimal webhook receiver for Alert Webhooks: copy it and put your own handling in `handle`.
 *
 *   WEBHOOK_SECRET=… PORT=4000 npx tsx examples/receiver.ts
 *
 * Register it with `POST /api/admin/webhooks {"url":"http://<this host>:4000/","secret":"<the same secret>"}`.
 */
import { createServer } from 'node:http';
// In your project: import { verifyPayloadHmac } from 'alert-webhooks';
import { verifyPayloadHmac } from '../src/index.js';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the secret given to the webhook.');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 4000);

// Delivery is at least once: the same delivery may come twice. `webhook-id` is the delivery id, so remember the
// recent ones and skip repeats. Bounded, so memory stays flat; use a shared store if you run several receivers.
const seen = new Set<string>();
const MAX_SEEN = 10_000;

function handle(payload: { eventType: string; sourceKey?: string; data: unknown }): void {
  // Your work goes here. Keep it quick, or queue it: the sender waits for the answer (10 s by default).
  console.log(`${payload.eventType}${payload.sourceKey ? ` on ${payload.sourceKey}` : ''}`);
}

createServer((req, res) => {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    // Verify the raw bytes exactly as received. Never JSON.parse then JSON.stringify before checking:
    // a re-serialised body can differ by a byte and the signature will not match.
    const rawBody = Buffer.concat(chunks);
    if (!verifyPayloadHmac(secret, rawBody, req.headers['x-payload-hmac'])) {
      console.warn('rejected a delivery with a bad or missing X-Payload-HMAC');
      return void res.writeHead(401).end();
    }

    const id = req.headers['webhook-id'];
    if (typeof id === 'string' && seen.has(id)) return void res.writeHead(204).end(); // a duplicate: already handled
    if (typeof id === 'string') {
      seen.add(id);
      // A Set iterates in insertion order: drop the oldest once full.
      if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value!);
    }

    // Answer 2xx at once: anything else, or no answer in time, counts as a failure and is retried later.
    res.writeHead(204).end();
    try {
      handle(JSON.parse(rawBody.toString('utf8')));
    } catch (err) {
      console.error('could not handle a delivery:', err);
    }
  });
}).listen(port, () => console.log(`receiving webhooks on port ${port}`));
