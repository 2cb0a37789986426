import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { claimAlert, runClaimedAlert, type RunDependencies } from '../../src/alerts/alert-run.js';
import { readAhead } from '../../src/alerts/read-ahead.js';
import { GraphError, type GraphSource, type RowStream, type RunOptions } from '../../src/graph/graph-source.js';
import { graphNode, NodeValue, type GraphRow } from '../../src/graph/items.js';
import { identifiedRows } from '../../src/graph/row-identity.js';
import { GraphRegistry } from '../../src/sources/graph-registry.js';
import { createWebhook } from '../support/fixtures.js';
import { useTestService } from '../support/test-service.js';

/**
 * A graph that answers as a Bolt server does: rows made as they are read, batches made of them. Each run's stream
 * hands over `rows` rows, calling `whileReading` once, halfway, as a server still working out its answer would be.
 */
class StreamingGraph implements GraphSource {
  readonly vendor = 'neo4j' as const;
  rows = 0;
  whileReading: () => Promise<void> = async () => undefined;

  async run(_query: string, options: RunOptions): Promise<RowStream> {
    const total = this.rows;
    const whileReading = this.whileReading;
    const stream: RowStream = {
      columns: ['a'],
      truncated: false,
      madeAsRead: true,
      identified: (batchRows) => identifiedRows(stream, batchRows),
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < Math.min(total, options.maxRows); i++) {
          if (i === Math.floor(total / 2)) await whileReading();
          yield { a: new NodeValue(graphNode(`account-${i}`, ['Account'], {}, Date.now())) } satisfies GraphRow;
        }
      },
      close: async () => undefined,
    };
    return stream;
  }
  subgraph(): never {
    throw new Error('not used');
  }
  async node() {
    return undefined;
  }
  async edge() {
    return undefined;
  }
  async verify() {}
  async ping() {}
  async close() {}
}

// Issue 44, item 9: an alert run on a Bolt graph read its stream inside its transaction, holding the alert's row
// (and, embedded, the database's one session) while the server worked; and it could record any number of deliveries.
describe('an alert run on a graph that streams its answer (Bolt)', () => {
  const t = useTestService();
  const graph = new StreamingGraph();
  let deps: RunDependencies;

  beforeAll(async () => {
    // A Bolt source, stored directly (creating it through the API reaches its server); this registry hands out the fake.
    await t.db.query(`INSERT INTO data_sources (key, name, graph) VALUES ('streamed', 'Streamed', $1)`, [JSON.stringify({ vendor: 'neo4j', url: 'bolt://graph.invalid:7687', user: 'neo4j', allowWrites: false })]);
    class StreamingGraphs extends GraphRegistry {
      override connect(): GraphSource {
        return graph;
      }
    }
    const graphs = new StreamingGraphs({ dataDir: '', bufferPoolBytes: 0, keyring: t.service.keyring, logger: t.service.alertRuns.logger });
    deps = { ...t.service.alertRuns, graphs, owner: 'streaming-test' };
  });

  async function newAlert(title: string): Promise<number> {
    const { rows } = await t.db.query<{ id: number }>(`INSERT INTO alerts (source_key, title) VALUES ('streamed', $1) RETURNING id`, [title]);
    await t.db.query(`INSERT INTO alert_queries (alert_id, name, query) VALUES ($1, 'accounts', 'MATCH (a:Account) RETURN a')`, [rows[0]!.id]);
    return rows[0]!.id;
  }
  const run = async (alertId: number, over: Partial<RunDependencies> = {}) => runClaimedAlert({ ...deps, ...over }, (await claimAlert(t.db, deps.owner, alertId, deps.limits))!);
  const count = async (sql: string, params: unknown[]) => (await t.db.query<{ n: number }>(sql, params)).rows[0]!.n;

  it('reads the rows first and records them after: the alert is free to change while the graph answers', async () => {
    const alertId = await newAlert('Read first');
    let during: string | undefined;
    graph.rows = 10;
    // Halfway through the answer, a change of the alert (an Admin's edit) must not wait for the run: inside the run's
    // transaction it would wait for the row (PostgreSQL) or the one session (embedded) until the run recorded.
    graph.whileReading = async () => {
      const edit = t.db.query(`UPDATE alerts SET description = 'edited while the graph answered' WHERE id = $1`, [alertId]).then(() => 'done');
      during = await Promise.race([edit, sleep(3_000).then(() => 'waited for the run')]);
    };
    const summary = await run(alertId);
    graph.whileReading = async () => undefined;
    expect(during).toBe('done');
    expect(summary).toMatchObject({ outcome: 'ok', rowsRead: 10, matchesNew: 10, casesOpened: 10 });
  });

  it('records at most the bound of deliveries, says so, and leaves the rest to the next run', async () => {
    const alertId = await newAlert('Bounded');
    for (let i = 0; i < 3; i++) await createWebhook(t.admin, { events: [{ eventType: 'newCase', sourceKey: 'streamed' }, { eventType: 'newMatch' }] });
    graph.rows = 30;
    // 3 webhooks get each new match: 40 deliveries are 13 matches.
    const first = await run(alertId, { maxDeliveries: 40 });
    expect(first).toMatchObject({ outcome: 'partial', matchesNew: 13, events: 13 });
    expect(first.problems).toEqual([{ source: 'alert', error: { key: 'max_deliveries_reached', message: expect.stringMatching(/^the run recorded 13 new matches and stopped: each new match goes to up to 3 subscribed webhooks, and a run creates at most 40 deliveries .* the next run records them$/) }, partial: true }]);
    // The first run of this file had no webhook: every delivery is this alert's.
    const deliveries = () => count('SELECT count(*)::int AS n FROM webhook_deliveries', []);
    expect(await deliveries()).toBe(39);
    const second = await run(alertId);
    expect(second).toMatchObject({ outcome: 'ok', matchesNew: 17, matchesSeen: 13 });
    expect(await deliveries()).toBe(90);
    expect(await count('SELECT count(*)::int AS n FROM alert_matches WHERE alert_id = $1', [alertId])).toBe(30);
  });

  it('holds at most the read-ahead bound of rows: past it the run stops reading, keeps what it read and says why', async () => {
    graph.rows = 100;
    const stream = await readAhead(await graph.run('', { readOnly: true, timeoutMs: 1000, maxRows: 1000 }), 2_000);
    const read: GraphRow[] = [];
    await expect(
      (async () => {
        for await (const row of stream) read.push(row);
      })(),
    ).rejects.toThrow(GraphError);
    expect(read.length).toBeGreaterThan(0);
    expect(read.length).toBeLessThan(100);
  });
});
