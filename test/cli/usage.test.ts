import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.js';
import { cli } from './cli-support.js';

describe('alert-webhooks help, --version and usage errors', () => {
  it('documents every command with help (exit 0), tells its version, and answers a wrong command line with exit 2', async () => {
    const help = await cli(['help'], {});
    expect(help.code).toBe(0);
    for (const command of ['serve', 'migrate', 'demo', 'rekey', 'admin reset-password <username>', 'webhooks list', 'deliveries redeliver --failed [--since ISO] [--webhook N]', 'config get [option]', 'config set <option> <value>']) {
      expect(help.stdout).toContain(command);
    }
    const version = await cli(['--version'], {});
    expect(version).toMatchObject({ code: 0, stdout: `${(JSON.parse(readFileSync(`${REPO_ROOT}package.json`, 'utf8')) as { version: string }).version}\n` });

    const unknown = await cli(['frobnicate'], {});
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toBe('alert-webhooks: unknown command "frobnicate"\nRun "alert-webhooks help" for the commands.\n');
    const group = await cli(['admin', 'frobnicate'], {});
    expect(group.code).toBe(2);
    expect(group.stderr).toContain('"admin frobnicate" is not a command; admin has: admin reset-password');
    const option = await cli(['deliveries', 'redeliver', '--failed', '--everything'], {});
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('unknown option --everything');
    expect((await cli(['migrate', 'now'], {})).code).toBe(2);
  }, 60_000);
});
