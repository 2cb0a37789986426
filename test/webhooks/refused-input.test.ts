import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';

// Input the URL parser or the CRON parser would take, but which would be stored as one thing and used as another,
// or never work: refused with 400 and a message naming the field, and nothing stored.
describe('webhook URLs and schedules that are refused', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t?.close());

  it('refuses URLs with control characters, an empty user part or port 0, and stores nothing', async () => {
    const refused: [string, string][] = [
      ['http://127.0.0.1:9/hook\r\nX-Injected: 1', 'url must not contain control characters (CR, LF, tab…) or begin or end with spaces; percent-encode them'],
      ['http://127.0.0.1:9/ho\nok', 'url must not contain control characters (CR, LF, tab…) or begin or end with spaces; percent-encode them'],
      ['http://127.0.0.1:9/ho\tok', 'url must not contain control characters (CR, LF, tab…) or begin or end with spaces; percent-encode them'],
      [' http://127.0.0.1:9/hook', 'url must not contain control characters (CR, LF, tab…) or begin or end with spaces; percent-encode them'],
      ['http://@127.0.0.1:9/hook', 'url must not contain a user:password part; authenticate receivers with the secret'],
      ['http://:@127.0.0.1:9/hook', 'url must not contain a user:password part; authenticate receivers with the secret'],
      ['http://127.0.0.1:0/hook', 'url port must be from 1 to 65535, got 0'],
    ];
    for (const [url, message] of refused) {
      expect(await t.admin.post('/api/admin/webhooks', { url, secret: 'a-long-enough-secret' }), JSON.stringify(url)).toMatchObject({
        status: 400,
        body: { key: 'invalid_parameter', message },
      });
    }
    const created = await t.admin.post('/api/admin/webhooks', { url: 'http://127.0.0.1:9/hook?a=b%0D%0A', secret: 'a-long-enough-secret' });
    expect(created.status).toBe(201);
    // A change of URL is checked the same way.
    expect((await t.admin.patch(`/api/admin/webhooks/${created.body.id}`, { url: 'http://@127.0.0.1:9/' })).status).toBe(400);
    expect((await t.admin.get('/api/admin/webhooks')).body.items.map((w: { url: string }) => w.url)).toEqual(['http://127.0.0.1:9/hook?a=b%0D%0A']);
  });

  it('refuses a CRON expression that never fires, and keeps the schedule in force', async () => {
    for (const option of ['deliveryFrequency', 'cleanupFrequency']) {
      expect(await t.admin.post('/api/config', { path: `webhooks.${option}`, configuration: '0 0 31 2 *' })).toMatchObject({
        status: 400,
        body: { key: 'invalid_parameter', message: `webhooks.${option} "0 0 31 2 *" never fires (no date matches it): give a schedule that runs, or "none"` },
      });
    }
    const settings = (await t.admin.get('/api/config')).body.webhooks;
    expect(settings).toMatchObject({ deliveryFrequency: '* * * * *', cleanupFrequency: '0 0 * * *' });
    // 29 February fires, every four years.
    expect((await t.admin.post('/api/config', { path: 'webhooks.cleanupFrequency', configuration: '0 0 29 2 *' })).status).toBe(204);
    expect((await t.anonymous.get('/health/ready')).status).toBe(200);
  });
});
