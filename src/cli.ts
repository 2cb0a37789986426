#!/usr/bin/env node
import { USAGE, UsageError } from './cli/usage.js';
import { VERSION } from './version.js';

/**
 * `alert-webhooks <command>`: one file per command in src/cli/. Exit codes: 0 done, 1 failed (the reason in one
 * line when it is the operator's to fix), 2 the command line was wrong.
 */
type Command = (args: readonly string[]) => Promise<void>;

const noArgs = (name: string, run: () => Promise<void>): Command => async (args) => {
  if (args.length > 0) throw new UsageError(`${name} takes no arguments`);
  await run();
};

/**
 * Commands by name; a group (`admin`, `webhooks`, `deliveries`) by its name and its sub-command's. Each is loaded
 * when it runs: `help` and `--version` load no database code, and an admin command not the whole service.
 */
const COMMANDS: Record<string, Command> = {
  serve: noArgs('serve', async () => (await import('./cli/serve.js')).serve()),
  migrate: noArgs('migrate', async () => (await import('./cli/migrate.js')).migrateOnly()),
  demo: noArgs('demo', async () => (await import('./cli/demo.js')).runDemo()),
  rekey: async (args) => (await import('./cli/rekey.js')).rekey(args),
  'admin reset-password': async (args) => (await import('./cli/reset-password.js')).resetPassword(args),
  'webhooks list': async (args) => (await import('./cli/webhooks-list.js')).webhooksList(args),
  'deliveries redeliver': async (args) => (await import('./cli/redeliver.js')).deliveriesRedeliver(args),
  'deliveries health': async (args) => (await import('./cli/deliveries-health.js')).deliveriesHealth(args),
  config: async (args) => (await import('./cli/config.js')).config(args),
  'graph load': async (args) => (await import('./cli/graph-load.js')).graphLoad(args),
  healthcheck: noArgs('healthcheck', async () => (await import('./cli/healthcheck.js')).healthcheck()),
};
// OperatorError (src/cli/startup-failures.ts), AppError (a rule of the API, src/errors.ts), ConfigError (the
// environment), DataDirLockedError, SecretsKeyError, SealedSecretError (a sealed secret that does not open: key ids only).
const OPERATOR_ERRORS = new Set(['OperatorError', 'AppError', 'ConfigError', 'DataDirLockedError', 'SecretsKeyError', 'SealedSecretError']);
const GROUPS = new Set(['admin', 'webhooks', 'deliveries', 'graph']);

async function main(argv: readonly string[]): Promise<void> {
  const [first = 'serve', ...rest] = argv;
  if (first === 'help' || first === '--help' || first === '-h') return console.log(USAGE);
  if (first === '--version' || first === 'version') return console.log(VERSION);
  const [name, args] = GROUPS.has(first) ? [`${first} ${rest[0] ?? ''}`.trim(), rest.slice(1)] : [first, rest];
  const command = COMMANDS[name];
  if (!command) {
    const group = GROUPS.has(first) ? Object.keys(COMMANDS).filter((known) => known.startsWith(`${first} `)) : [];
    throw new UsageError(group.length ? `"${name}" is not a command; ${first} has: ${group.join(', ')}` : `unknown command "${name}"`);
  }
  await command(args);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    console.error(`alert-webhooks: ${err.message}\nRun "alert-webhooks help" for the commands.`);
    process.exit(2);
  }
  // Errors that are the operator's to fix get their message alone; anything else its stack too. Told by name: the
  // modules that define them are loaded only by the commands that need them.
  if (err instanceof Error && err.name === 'DemoError') {
    // The demo has said what failed, step by step.
  } else if (err instanceof Error && OPERATOR_ERRORS.has(err.name)) {
    console.error(`alert-webhooks: ${err.message}`);
  } else {
    console.error(`alert-webhooks ${process.argv[2] ?? 'serve'}: failed:`, err);
  }
  process.exit(1);
});
