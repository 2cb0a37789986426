import { expect } from 'vitest';
import type { ApiClient } from './test-service.js';

/**
 * A read that outlives every time-out the tests give it, however fast the machine, streamed so that Kùzu's own
 * time-out interrupts it with little memory held (four at once: 117 MB): 40,000,000,000 rows of a cross product, to
 * end with a RETURN. Two lists of 20,000 alone (400,000,000 rows) took Kùzu 1.6 s on an idle machine, at the edge of
 * the 1–1.5 s time-outs, and a query meant to run past its time-out once ended within it (26 November); two lists of
 * 200,000 held 600 MB, four at once.
 */
export const SLOW_CROSS_PRODUCT = 'UNWIND range(1, 20000) AS x UNWIND range(1, 20000) AS y UNWIND range(1, 100) AS z WITH x, y, z WHERE (x * y + z) % 7 = 3';

/** Small steps every domain test needs, each asserting the API accepted it. */
export async function createSource(admin: ApiClient, key: string, name = `Source ${key}`): Promise<void> {
  const response = await admin.post('/api/admin/sources', { key, name });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
}

export async function createAlert(admin: ApiClient, sourceKey: string, body: Record<string, unknown> = {}): Promise<{ id: number }> {
  const response = await admin.post(`/api/admin/${sourceKey}/alerts`, { title: 'Shared phone numbers', description: 'Two clients share a phone', ...body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

export async function createWebhook(admin: ApiClient, body: Record<string, unknown> = {}): Promise<{ id: number }> {
  const response = await admin.post('/api/admin/webhooks', { url: 'http://127.0.0.1:9/hook', secret: 'test-webhook-secret', ...body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

export async function reportMatches(
  admin: ApiClient,
  sourceKey: string,
  alertId: number,
  matches: { nodes?: string[]; edges?: string[] }[],
): Promise<{ id: number; created: boolean }[]> {
  const response = await admin.post(`/api/admin/${sourceKey}/alerts/${alertId}/matches`, { matches });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.cases;
}
