/** What `alert-webhooks help` prints: every command, and the settings they read. */
export const USAGE = `Usage: alert-webhooks <command>

Commands:
  serve                             run the service (API and delivery worker, as ROLE says); the default
  migrate                           apply pending database migrations and exit
  demo                              a guided end-to-end run: throwaway database, a receiver, signed deliveries (about 10 s)
  rekey                             seal again under SECRETS_KEY every webhook secret sealed under another key
                                    (given as SECRETS_KEY_PREVIOUS), in batches; prints how many; on PostgreSQL
                                    while the services run (with both keys), embedded with the service stopped
  admin reset-password <username>   give a user a new password and end their sessions; prints a generated one,
                                    or reads it from stdin when stdin is not a terminal and not empty:
                                      echo 'new password' | alert-webhooks admin reset-password admin
  webhooks list                     the webhooks: id, url, events, created
  deliveries redeliver --failed [--since ISO] [--webhook N]
                                    make failed deliveries pending and due now (those that failed since ISO,
                                    of webhook N), in batches; prints how many
  deliveries health [--range hour|day|week] [--webhook N]
                                    attempts per minute (hour), hour (day) or UTC day (week), of webhook N or all:
                                    sent, retried, failed, with the success rate and p95 attempt duration
  config get [option]               the webhooks settings as JSON, or one option's value
  config set <option> <value>       change a webhooks setting, checked as POST /api/config checks it; the value
                                    is read as JSON when it is JSON, else as a string:
                                      alert-webhooks config set deliveryFrequency '*/10 * * * * *'
                                      alert-webhooks config set retryScheduleMs '[60000, 300000]'
  graph load <sourceKey> --nodes <Label>=<file.csv> … [--edges <Type>=<file.csv> …]
                                    load CSV files into a data source's embedded graph, all or nothing; tables
                                    are made from the headers (a node file's first column is its key; an edge
                                    file starts from:<Label>,to:<Label>; other columns name:TYPE, STRING if
                                    untyped); the service must be stopped (it holds the graph)
  healthcheck                       exit 0 when this machine's service answers GET /health/live (the API port, or
                                    METRICS_PORT for ROLE=worker), else 1: a container's HEALTHCHECK
  help, --version

The admin, webhooks, deliveries and config commands work on the database directly: on PostgreSQL while the
service runs; on the embedded database only while no service holds it (use the API then).

Environment: DATABASE_URL (postgres://…; unset = embedded database in DATA_DIR, default ./data),
SECRETS_KEY (base64 of 32 bytes; required with DATABASE_URL; embedded default DATA_DIR/secrets.key),
SECRETS_KEY_FILE, SECRETS_KEY_PREVIOUS (during a rekey),
PORT (3000), HOST, METRICS_PORT (9464, ROLE=worker's health checks; 0 = off), PUBLIC_BASE_URL, ADMIN_EMAIL,
ADMIN_PASSWORD, LOG_LEVEL, ROLE (all|api|worker); the README lists them all.
Exit codes: 0 done, 1 failed, 2 the command line was wrong.`;

/** The command line was wrong: exit code 2, with a pointer to `help`. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Splits `args` into positional arguments and `--name value` / `--flag` options. `flags` are the options that take
 * no value, `valued` those that do; anything else is a UsageError.
 */
export function parseArgs(args: readonly string[], flags: readonly string[] = [], valued: readonly string[] = []): { positional: string[]; options: Map<string, string | true> } {
  const positional: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (flags.includes(name) && eq === -1) {
      options.set(name, true);
    } else if (valued.includes(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
      options.set(name, value);
    } else {
      throw new UsageError(`unknown option ${arg}`);
    }
  }
  return { positional, options };
}

/** Refuses positional arguments beyond `max`. */
export function expectArgs(positional: readonly string[], min: number, max: number, usage: string): void {
  if (positional.length < min || positional.length > max) throw new UsageError(`usage: alert-webhooks ${usage}`);
}

/** `--webhook N`: a webhook id as the API writes it, a positive integer in plain decimal. */
export function parseWebhookId(text: string): number {
  if (!/^[1-9]\d{0,9}$/.test(text) || Number(text) > 2147483647) throw new UsageError(`--webhook must be a webhook id (a positive integer), got "${text}"`);
  return Number(text);
}
