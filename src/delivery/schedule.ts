import { Cron } from 'croner';
import type { Logger } from '../logger.js';
import type { DeliveryFrequency } from '../settings/webhook-settings.js';

/** `immediate`: fire on every wake-up, and every `sweepMs` for those that went unheard. */
export interface WakeUps {
  /** Starts calling `wake`; answers once it does, with the function that stops it. */
  listen(wake: () => void): Promise<() => Promise<void>>;
  /** How often it fires anyway: a wake-up can be lost (PostgreSQL's NOTIFY, while its connection is down). */
  sweepMs: number;
}

/**
 * One recurring task on a CRON pattern that can change at any time. Firings never overlap: a firing that
 * comes while the task still runs is skipped (the running task already does what it would do). With `wakeUps`,
 * the pattern may also be `immediate`: it fires at once, on every wake-up, and every `sweepMs`.
 */
export class RecurringTask {
  #cron: Cron | undefined;
  #pattern: DeliveryFrequency = 'none';
  #running: Promise<void> | undefined;
  #sweep: NodeJS.Timeout | undefined;
  #stopListening: (() => Promise<void>) | undefined;
  readonly #listenings = new Set<Promise<unknown>>(); // `immediate`: LISTENs and UNLISTENs on their way
  #generation = 0; // moves with every change of pattern: a LISTEN answered after the change is undone

  constructor(
    readonly name: string,
    private readonly task: () => Promise<unknown>,
    private readonly log: Logger,
    private readonly wakeUps?: WakeUps,
  ) {}

  get pattern(): DeliveryFrequency {
    return this.#pattern;
  }

  /** Whether it fires on its pattern (readiness): `none`, a timer that is set and has a next run, or listening. */
  get armed(): boolean {
    if (this.#pattern === 'immediate') return this.#stopListening !== undefined;
    return this.#pattern === 'none' || (this.#cron?.isRunning() ?? false);
  }

  /** Re-arms on `pattern`; `none` stops it. The same pattern again changes nothing. */
  set(pattern: DeliveryFrequency): void {
    if (pattern === this.#pattern) return;
    if (pattern === 'immediate' && !this.wakeUps) throw new Error(`"immediate" is not a pattern of the ${this.name} task`);
    this.#disarm();
    this.#pattern = pattern;
    if (pattern === 'immediate') this.#armImmediate();
    else if (pattern !== 'none') this.#cron = new Cron(pattern, () => void this.runNow());
    this.log.info({ task: this.name, pattern }, pattern === 'none' ? 'schedule stopped' : 'schedule armed');
  }

  /** Runs the task now, unless it is running already (then answers when that run ends). */
  runNow(): Promise<void> {
    this.#running ??= this.task()
      .then(() => undefined)
      .catch((err: unknown) => this.log.error({ err, task: this.name }, 'scheduled task failed'))
      .finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** Stops firing and waits for a run in progress, and for its listening to end. */
  async stop(): Promise<void> {
    this.set('none');
    await Promise.all([this.#running, ...this.#listenings]);
  }

  #armImmediate(): void {
    const wakeUps = this.wakeUps!;
    const generation = this.#generation;
    const fire = () => void this.runNow();
    // (A timer longer than 2^31 - 1 ms would fire at once.)
    this.#sweep = setInterval(fire, Math.min(wakeUps.sweepMs, 2 ** 31 - 1));
    this.#track(
      wakeUps.listen(fire).then(
        async (stopListening) => {
          if (generation !== this.#generation) return stopListening(); // disarmed meanwhile
          this.#stopListening = stopListening;
          // What was made due before this listened was told to nobody.
          fire();
        },
        (err: unknown) => this.log.error({ err, task: this.name }, 'cannot listen for wake-ups; only the sweep fires'),
      ),
    );
  }

  #track(work: Promise<unknown>): void {
    const tracked = work.catch((err: unknown) => this.log.error({ err, task: this.name }, 'could not stop listening for wake-ups'));
    this.#listenings.add(tracked);
    void tracked.finally(() => this.#listenings.delete(tracked));
  }

  #disarm(): void {
    this.#generation++;
    this.#cron?.stop();
    this.#cron = undefined;
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    const stopListening = this.#stopListening;
    this.#stopListening = undefined;
    if (stopListening) this.#track(stopListening());
  }
}
