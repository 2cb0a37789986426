import { describe, expect, it } from 'vitest';
import { caseUrl } from '../../src/alerts/case-url.js';
import { renderCaseStatusChange, renderNewCase, renderNewMatch, renderPing } from '../../src/outbox/events.js';

// Golden bytes: the exact payloads of docs/api.md (Events and payloads), against fixed ids and timestamps.
const alert = { id: 3, title: 'Shared phone numbers', description: 'Two clients share a phone' };
const createdAt = new Date('2026-11-22T10:04:05.123Z');
const updatedAt = new Date('2026-11-22T11:00:00.000Z');
const url = caseUrl('https://lke.example.com', 3, 17);

describe('payloads', () => {
  it('renders newCase', () => {
    expect(renderNewCase('b4675b85', alert, { id: 17, createdAt, nodes: ['1', '2', '3'], edges: ['4', '5'], url })).toBe(
      '{"eventType":"newCase","sourceKey":"b4675b85","data":{' +
        '"alert":{"id":3,"title":"Shared phone numbers","description":"Two clients share a phone"},' +
        '"case":{"id":17,"createdAt":"2026-11-22T10:04:05.123Z","target":{"nodes":["1","2","3"],"edges":["4","5"]},' +
        '"url":"https://lke.example.com/alerts/3/case/17"}}}',
    );
  });

  it('renders newMatch, with updatedAt after createdAt', () => {
    expect(renderNewMatch('b4675b85', alert, { id: 17, createdAt, updatedAt, nodes: ['1', '2', '3'], edges: ['4', '5'], url })).toBe(
      '{"eventType":"newMatch","sourceKey":"b4675b85","data":{' +
        '"alert":{"id":3,"title":"Shared phone numbers","description":"Two clients share a phone"},' +
        '"case":{"id":17,"createdAt":"2026-11-22T10:04:05.123Z","updatedAt":"2026-11-22T11:00:00.000Z",' +
        '"target":{"nodes":["1","2","3"],"edges":["4","5"]},"url":"https://lke.example.com/alerts/3/case/17"}}}',
    );
  });

  it('renders caseStatusChange with the user and the comment', () => {
    const user = { id: 2, username: 'ana', email: 'ana@example.com' };
    expect(renderCaseStatusChange('b4675b85', alert, { id: 17, createdAt, updatedAt, status: 'confirmed', url }, user, 'Checked with the bank')).toBe(
      '{"eventType":"caseStatusChange","sourceKey":"b4675b85","data":{' +
        '"alert":{"id":3,"title":"Shared phone numbers","description":"Two clients share a phone"},' +
        '"case":{"id":17,"createdAt":"2026-11-22T10:04:05.123Z","updatedAt":"2026-11-22T11:00:00.000Z","status":"confirmed",' +
        '"url":"https://lke.example.com/alerts/3/case/17"},' +
        '"user":{"id":2,"username":"ana","email":"ana@example.com"},"comment":"Checked with the bank"}}',
    );
  });

  it('renders "" for an absent description or comment', () => {
    const bare = { id: 3, title: 'T', description: '' };
    const payload = renderCaseStatusChange('s', bare, { id: 1, createdAt, updatedAt, status: 'dismissed', url }, { id: 1, username: 'a', email: 'a@b' }, undefined);
    expect(payload).toContain('"alert":{"id":3,"title":"T","description":""}');
    expect(payload.endsWith(',"comment":""}}')).toBe(true);
  });

  it('renders ping', () => {
    expect(renderPing(7)).toBe('{"eventType":"ping","data":{"webhookId":7}}');
  });

  it('escapes text as JSON, keeping it UTF-8', () => {
    const tricky = { id: 1, title: 'quote " backslash \\ newline \n é 漢', description: '' };
    const payload = renderNewCase('s', tricky, { id: 1, createdAt, nodes: ['a'], edges: [], url });
    expect(JSON.parse(payload).data.alert.title).toBe(tricky.title);
    expect(payload).toContain('é 漢');
  });
});
