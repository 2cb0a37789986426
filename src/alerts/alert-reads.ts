/**
 * What a user reads of one alert: the alert itself and its run history, each after the alert is found in the route's
 * data source, so an alert of another source answers 404 as one that does not exist.
 */
import type { Queryable } from '../db/database.js';
import { alertRuns, findAlert, loadAlert, type Alert, type AlertLimits, type AlertRunRecord } from './alerts.js';

/** The alert with its queries and its latest runs. */
export async function readAlert(db: Queryable, sourceKey: string, alertId: number, limits: AlertLimits): Promise<Alert> {
  return loadAlert(db, await findAlert(db, sourceKey, alertId), limits);
}

/** A page of the alert's runs, newest first. */
export async function readRunHistory(db: Queryable, sourceKey: string, alertId: number, page: { offset: number; limit: number }): Promise<{ items: AlertRunRecord[] }> {
  await findAlert(db, sourceKey, alertId);
  return { items: await alertRuns(db, alertId, page) };
}
