import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WebhookBacklog } from '../outbox/backlog.js';
import { EVENT_TYPES } from '../outbox/schemas.js';
import { VERSION } from '../version.js';

/** How an attempt ended, as the `outcome` label says it: `pending` after an attempt is a retry. */
export type AttemptOutcome = 'sent' | 'pending' | 'failed';

/** One data source's graph, as a scrape sees it. */
export interface GraphUp {
  sourceKey: string;
  up: boolean;
}

/** The label children of one webhook, bound once: an attempt increments them without building a label object. */
interface WebhookChildren {
  sent: Counter.Internal;
  retry: Counter.Internal;
  failed: Counter.Internal;
  duration: Histogram.Internal<'webhook'>;
  /**
   * Attempts counted here and not yet added to the counters: sent, retry, failed. Added when the counter is collected
   * (a scrape), so an attempt costs an array increment, not a counter's label hashing (bench/README.md, "Contention").
   */
  pending: [number, number, number];
}

// The backlog is read once per BACKLOG_CACHE_MS however many scrapers (or gauges) ask.
const BACKLOG_CACHE_MS = 1_000;
// How often a scrape looks for the series of webhooks deleted elsewhere.
const PRUNE_EVERY_MS = 60_000;
// Attempts last up to the request time-out (10 s by default, more if raised): the top buckets cover it.
const ATTEMPT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const GRAPH_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600];
const STATEMENT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
// API answers take milliseconds; a large match report or a page of big deliveries can take seconds.
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The process's Prometheus metrics (docs/operations.md lists them), in a registry of its own rather than
 * prom-client's global one: several services in one process (the tests) each keep their own. The delivery side
 * counts into it on its hot path (an attempt costs an increment of plain numbers and a histogram observation, found in a Map); the backlog gauges are
 * read from the database at scrape time, through `backlog`, at most once a second.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #attempts: Counter<'webhook' | 'outcome'>;
  readonly #attemptDuration: Histogram<'webhook'>;
  readonly #eventsRecorded: Counter<'event_type'>;
  readonly #eventChildren = new Map<string, Counter.Internal>();
  readonly #claimDuration: Histogram;
  readonly #flushDuration: Histogram;
  readonly #webhooks = new Map<number, WebhookChildren>();
  readonly #httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  #backlog: { at: number; rows: Promise<WebhookBacklog[]> } | undefined;

  constructor(
    private readonly options: {
      backlog?: () => Promise<WebhookBacklog[]>;
      graphs?: () => Promise<GraphUp[]>;
      /** Which of these webhook ids still exist: the series of the others are removed (see #forgetDeletedWebhooks). */
      existingWebhooks?: (ids: number[]) => Promise<number[]>;
      defaultMetrics?: boolean;
    } = {},
  ) {
    const registers = [this.registry];
    const forgetDeleted = () => this.#forgetDeletedWebhooks();
    this.#attempts = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Delivery attempts, by webhook and outcome (sent, retry, failed)',
      labelNames: ['webhook', 'outcome'],
      registers,
      collect: () => {
        this.#addPendingAttempts();
        return forgetDeleted();
      },
    });
    this.#attemptDuration = new Histogram({
      name: 'webhook_delivery_attempt_duration_seconds',
      help: 'Duration of delivery attempts, by webhook',
      labelNames: ['webhook'],
      buckets: ATTEMPT_BUCKETS,
      registers,
      collect: forgetDeleted,
    });
    this.#eventsRecorded = new Counter({ name: 'webhook_events_recorded_total', help: 'Events recorded in the outbox (at least one webhook subscribed), by event type', labelNames: ['event_type'], registers });
    for (const type of [...EVENT_TYPES, 'ping']) this.#eventChildren.set(type, this.#eventsRecorded.labels(type));
    this.#claimDuration = new Histogram({ name: 'webhook_claim_duration_seconds', help: 'Duration of one claim of due deliveries', buckets: STATEMENT_BUCKETS, registers });
    this.#flushDuration = new Histogram({ name: 'webhook_outcome_flush_duration_seconds', help: 'Duration of one batched write of attempt outcomes', buckets: STATEMENT_BUCKETS, registers });

    const backlogGauge = (name: string, help: string, value: (row: WebhookBacklog) => number) => {
      const read = () => this.#readBacklog();
      return new Gauge({
        name,
        help,
        labelNames: ['webhook'],
        registers,
        async collect() {
          const rows = await read();
          this.reset(); // a deleted webhook's series goes away
          for (const row of rows) this.labels(String(row.webhookId)).set(value(row));
        },
      });
    };
    backlogGauge('webhook_deliveries_due', 'Deliveries pending and due now (in flight included), by webhook', (r) => r.due);
    backlogGauge('webhook_deliveries_oldest_due_age_seconds', 'Seconds since the oldest due delivery became due (0: none due), by webhook', (r) => r.oldestDueAgeSeconds);
    backlogGauge('webhook_deliveries_failed', 'Deliveries ended failed and still kept (within failedDeliveryRetentionDelayMs), by webhook', (r) => r.failed);
    backlogGauge('webhook_disabled', '1 when the webhook is disabled (by an admin or automatically), else 0', (r) => (r.disabled ? 1 : 0));
    this.#backlogErrors = new Counter({ name: 'webhook_backlog_read_errors_total', help: 'Scrapes whose backlog query failed (the database away): the backlog gauges were left empty', registers });
    // Labelled by the route's pattern (`/api/admin/webhooks/:webhookId`), never the path itself: ids in paths, and
    // anything a client invents for a 404, would make a series each.
    this.#httpDuration = new Histogram({ name: 'http_request_duration_seconds', help: 'Duration of API requests, by method, route pattern and status code', labelNames: ['method', 'route', 'status_code'], buckets: HTTP_BUCKETS, registers });
    const buildInfo = new Gauge({ name: 'alert_webhooks_build_info', help: 'Always 1: the version of the service and of Node this process runs', labelNames: ['version', 'node_version'], registers });
    buildInfo.labels(VERSION, process.version).set(1);
    this.#graphQueryDuration = new Histogram({ name: 'graph_query_duration_seconds', help: 'Duration of graph queries (API and alert runs), by data source and outcome', labelNames: ['source', 'outcome'], buckets: GRAPH_BUCKETS, registers });
    const readGraphs = () => this.#readGraphs();
    new Gauge({
      name: 'graph_up',
      help: '1 when the graph of the data source answered a round trip at scrape time, else 0',
      labelNames: ['source'],
      registers,
      async collect() {
        const graphs = await readGraphs();
        this.reset(); // a deleted source's series goes away
        for (const g of graphs) this.labels(g.sourceKey).set(g.up ? 1 : 0);
      },
    });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  readonly #graphQueryDuration: Histogram<'source' | 'outcome'>;
  #alertRuns: Counter<'outcome'> | undefined;
  #alertRunDuration: Histogram | undefined;
  #alertMatches: Counter | undefined;

  /** One alert run ended: its outcome (ok, partial, failed), how long it took, how many new matches it recorded. */
  alertRun(outcome: string, durationSeconds: number, matchesNew: number): void {
    const registers = [this.registry];
    this.#alertRuns ??= new Counter({ name: 'alert_runs_total', help: 'Alert runs, by outcome (ok, partial, failed)', labelNames: ['outcome'], registers });
    this.#alertRunDuration ??= new Histogram({ name: 'alert_run_duration_seconds', help: 'Duration of alert runs', buckets: GRAPH_BUCKETS, registers });
    this.#alertMatches ??= new Counter({ name: 'alert_matches_recorded_total', help: 'New matches recorded by alert runs', registers });
    this.#alertRuns.labels(outcome).inc();
    this.#alertRunDuration.observe(durationSeconds);
    this.#alertMatches.inc(matchesNew);
  }

  /** One graph query of `source` ended: `ok`, or the error key it failed with. */
  graphQuery(source: string, outcome: string, durationSeconds: number): void {
    this.#graphQueryDuration.labels(source, outcome).observe(durationSeconds);
  }

  #readGraphs(): Promise<GraphUp[]> {
    return this.options.graphs ? this.options.graphs().catch(() => []) : Promise.resolve([]);
  }

  readonly #backlogErrors: Counter;

  /**
   * Removes a deleted webhook's series (its attempt counters and duration histogram, 18 series) and its entry here.
   * The process that deletes a webhook calls it at once; every process also drops, at a scrape at most once a
   * minute, the series of webhooks that no longer exist (deleted through another process). So the per-webhook series
   * are bounded by the webhooks that exist (MAX_WEBHOOKS), never by the ids ever seen.
   */
  forgetWebhook(webhookId: number): void {
    this.#backlog = undefined; // the backlog gauges are read afresh, without it
    if (!this.#webhooks.delete(webhookId)) return;
    const webhook = String(webhookId);
    for (const outcome of ['sent', 'retry', 'failed']) this.#attempts.remove(webhook, outcome);
    this.#attemptDuration.remove(webhook);
  }

  #prunedAt = 0;
  #pruning: Promise<void> | undefined;

  /** One pruning shared by the metrics a scrape collects at once (the attempts and their durations), so both see it. */
  #forgetDeletedWebhooks(): Promise<void> {
    const ids = [...this.#webhooks.keys()];
    if (this.#pruning) return this.#pruning;
    const existingWebhooks = this.options.existingWebhooks;
    if (!existingWebhooks || ids.length === 0 || Date.now() - this.#prunedAt < PRUNE_EVERY_MS) return Promise.resolve();
    this.#prunedAt = Date.now();
    this.#pruning = existingWebhooks(ids)
      // The database away: kept until a later scrape can tell.
      .catch(() => ids)
      .then((found) => {
        const existing = new Set(found);
        for (const id of ids) if (!existing.has(id)) this.forgetWebhook(id);
      })
      .finally(() => (this.#pruning = undefined));
    return this.#pruning;
  }

  /** One finished attempt of webhook `webhookId`. */
  attempt(webhookId: number, outcome: AttemptOutcome, durationSeconds: number): void {
    let children = this.#webhooks.get(webhookId);
    if (!children) {
      const webhook = String(webhookId);
      children = {
        sent: this.#attempts.labels(webhook, 'sent'),
        retry: this.#attempts.labels(webhook, 'retry'),
        failed: this.#attempts.labels(webhook, 'failed'),
        duration: this.#attemptDuration.labels(webhook),
        pending: [0, 0, 0],
      };
      // Every outcome's series from the webhook's first attempt, at 0: a ratio of failed to all is 0, not absent.
      for (const counter of [children.sent, children.retry, children.failed]) counter.inc(0);
      this.#webhooks.set(webhookId, children);
    }
    children.pending[outcome === 'sent' ? 0 : outcome === 'pending' ? 1 : 2]++;
    children.duration.observe(durationSeconds);
  }

  /** Adds the attempts counted since the last collection to the attempt counters. */
  #addPendingAttempts(): void {
    for (const children of this.#webhooks.values()) {
      const [sent, retry, failed] = children.pending;
      if (sent > 0) children.sent.inc(sent);
      if (retry > 0) children.retry.inc(retry);
      if (failed > 0) children.failed.inc(failed);
      children.pending.fill(0);
    }
  }

  /** `count` events of `eventType` written to the outbox. */
  eventsRecorded(eventType: string, count = 1): void {
    let child = this.#eventChildren.get(eventType);
    if (!child) {
      child = this.#eventsRecorded.labels(eventType);
      this.#eventChildren.set(eventType, child);
    }
    child.inc(count);
  }

  /** One answered API request; `route` is its pattern, or undefined when no route matched (a 404). */
  httpRequest(method: string, route: string | undefined, statusCode: number, durationSeconds: number): void {
    this.#httpDuration.labels(method, route ?? 'unmatched', String(statusCode)).observe(durationSeconds);
  }

  claimed(durationSeconds: number): void {
    this.#claimDuration.observe(durationSeconds);
  }

  outcomesFlushed(durationSeconds: number): void {
    this.#flushDuration.observe(durationSeconds);
  }

  /** The text exposition of every metric of this process. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * The backlog, read at most once per BACKLOG_CACHE_MS (the four gauges and concurrent scrapes share one read).
   * With the database away the gauges are empty and the scrape still answers, with the process metrics.
   */
  #readBacklog(): Promise<WebhookBacklog[]> {
    const read = this.options.backlog;
    if (!read) return Promise.resolve([]);
    const now = Date.now();
    if (!this.#backlog || now - this.#backlog.at >= BACKLOG_CACHE_MS) {
      this.#backlog = {
        at: now,
        rows: read().catch(() => {
          this.#backlogErrors.inc();
          return [];
        }),
      };
    }
    return this.#backlog.rows;
  }
}
