/**
 * The bounds of one alert run beside maxMatches: a run records at most maxDeliveries deliveries. Each new match is
 * one event, delivered to every webhook subscribed to newCase or newMatch on the source (at most), so a run records
 * at most newMatchesAllowed new matches. Past them it stops: the matches not recorded are new to the next run, which
 * records them.
 */
import type { EventRouting } from '../outbox/enqueue.js';
import type { RunProblem } from './alerts.js';

export interface DeliveriesBound {
  /** The most deliveries one run records (matches × subscribed webhooks). */
  maxDeliveries: number;
  /** The webhooks a new match may go to. */
  subscribers: number;
  /** The most new matches the run records: Infinity when no webhook is subscribed. */
  newMatchesAllowed: number;
}

export function deliveriesBound(routing: EventRouting, sourceKey: string, maxDeliveries: number): DeliveriesBound {
  const subscribers = subscribedWebhooks(routing, sourceKey);
  return { maxDeliveries, subscribers, newMatchesAllowed: subscribers === 0 ? Infinity : Math.floor(maxDeliveries / subscribers) };
}

/** The webhooks a new match of `sourceKey` may go to: those subscribed to newCase or newMatch on it (or on every source). */
function subscribedWebhooks(routing: EventRouting, sourceKey: string): number {
  if (!routing.enabled) return 0;
  const ids = new Set<number>();
  for (const s of routing.subscriptions) if ((s.event_type === 'newCase' || s.event_type === 'newMatch') && (s.source_key === null || s.source_key === sourceKey)) ids.add(s.webhook_id);
  return ids.size;
}

/** What stopped a run, as its problems: the rows it did not read past maxMatches, the matches it did not record. */
export function boundProblems(stopped: { capped: boolean; deliveriesCapped: boolean; matchesNew: number }, maxMatches: number, bound: DeliveriesBound): RunProblem[] {
  const problems: RunProblem[] = [];
  if (stopped.capped) {
    const message = `the run stopped reading after ${maxMatches} rows (maxMatches: every row read counts, a match or not); the rest were not read`;
    problems.push({ source: 'alert', error: { key: 'max_matches_reached', message }, partial: true });
  }
  if (stopped.deliveriesCapped) {
    const message =
      `the run recorded ${stopped.matchesNew} new matches and stopped: each new match goes to up to ${bound.subscribers} subscribed webhooks, and a run creates at most ` +
      `${bound.maxDeliveries} deliveries (matches × subscribed webhooks); the matches past them were not recorded, and the next run records them`;
    problems.push({ source: 'alert', error: { key: 'max_deliveries_reached', message }, partial: true });
  }
  return problems;
}
