import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { TestReceiver } from '../support/receiver.js';
import { openTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/test-service.js';

// The statistics check's own statement (analyzeQueueIfStale): the only one that reads pg_class.reltuples.
const STATISTICS_CHECK = /reltuples/;

/** The real database, with each top-level statement's text noted (the statistics check runs at the top level). */
function noting(db: Database, texts: string[]): Database {
  return {
    ...db,
    kind: db.kind,
    query: ((statement: unknown, params?: readonly unknown[]) => {
      texts.push(typeof statement === 'string' ? statement : String((statement as { text?: unknown }).text));
      return (db.query as (s: unknown, p?: readonly unknown[]) => ReturnType<Database['query']>)(statement, params);
    }) as Database['query'],
  };
}

describe('when a drain checks the queue statistics', () => {
  let t: TestService;
  let testDb: TestDatabase;
  let receiver: TestReceiver;
  let alertId: number;
  const statements: string[] = [];
  beforeAll(async () => {
    testDb = await openTestDatabase();
    t = await startTestService({ testDb: { ...testDb, db: noting(testDb.db, statements) } });
    receiver = await TestReceiver.start();
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
    await createWebhook(t.admin, { url: receiver.url });
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
    // A database handed to startTestService is the caller's to dispose (on PostgreSQL it was left behind).
    await testDb?.dispose();
  });

  it('a small drain does not check them: under immediate, every burst of events is a drain of its own', async () => {
    await reportMatches(t.admin, 'src', alertId, Array.from({ length: 100 }, (_, i) => ({ nodes: [`small-${i}`] })));
    statements.length = 0;
    expect(await t.service.engine.worker.drain()).toBe(100);
    expect(receiver.received).toHaveLength(100);
    expect(statements.some((s) => /webhook_deliveries/.test(s))).toBe(true); // the claims went through here
    expect(statements.filter((s) => STATISTICS_CHECK.test(s))).toHaveLength(0);
  });

  it('a drain that has claimed 256 checks them once, after its first claim', async () => {
    for (let call = 0; call < 3; call++) {
      await reportMatches(t.admin, 'src', alertId, Array.from({ length: 500 }, (_, i) => ({ nodes: [`large-${call}-${i}`] })));
    }
    statements.length = 0;
    expect(await t.service.engine.worker.drain()).toBe(1500);
    await t.service.engine.worker.stop();
    expect(receiver.received).toHaveLength(1600);
    expect(statements.filter((s) => STATISTICS_CHECK.test(s))).toHaveLength(1);
    // Not before the first claim: the drain's first statement is a claim.
    const firstClaim = statements.findIndex((s) => /FOR UPDATE SKIP LOCKED/.test(s));
    const check = statements.findIndex((s) => STATISTICS_CHECK.test(s));
    expect(firstClaim).toBeGreaterThanOrEqual(0);
    expect(check).toBeGreaterThan(firstClaim);
  });
});
