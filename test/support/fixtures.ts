import { expect } from 'vitest';
import type { ApiClient } from './test-service.js';

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
