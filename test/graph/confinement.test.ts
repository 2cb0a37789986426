import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeConfinement, hostConfinement } from '../../src/graph/embedded/confinement.js';
import { EmbeddedGraph } from '../../src/graph/embedded/embedded-graph.js';

/**
 * The operating system's bound on the embedded graph's process, shown from inside it through its test hook: reads
 * and writes by paths no query plan would ever pass, answered by the kernel, not by the service's checks.
 */
describe('the embedded graph’s process, confined', () => {
  let dataDir: string;
  let graph: EmbeddedGraph;
  let secret: string;
  let folder: string;
  const password = `admin-password-${process.pid}`;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'aw-confined-'));
    // DATA_DIR's layout: the keyring beside the graphs' folders.
    secret = path.join(dataDir, 'secrets.key');
    writeFileSync(secret, 'sealing key', { mode: 0o600 });
    folder = path.join(dataDir, 'graphs', 'confined');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'inside.txt'), 'the graph’s own');
    // The service's environment holds secrets; its graph's process must get none of it.
    process.env.ADMIN_PASSWORD = password;
    graph = new EmbeddedGraph({ folder, bufferPoolBytes: 32 << 20, label: 'data source "confined"', testHooks: true });
    await graph.open();
  });

  afterAll(async () => {
    delete process.env.ADMIN_PASSWORD;
    await graph?.close();
  });

  it('is confined by Landlock on this machine, and says so in one line', () => {
    const confinement = hostConfinement();
    expect(confinement.kind).toBe('landlock');
    expect(describeConfinement(confinement)).toMatch(/^embedded graphs: each Kùzu process confined by Landlock \(ABI \d+\)/);
    expect(describeConfinement({ kind: 'none', why: 'no Landlock here' })).toMatch(/NOT confined \(no Landlock here\)/);
  });

  it('reads and writes its own folder', async () => {
    const access = await graph.fileAccess(path.join(folder, 'inside.txt'), folder);
    expect(access).toMatchObject({ read: 'ok', write: 'ok' });
    expect(readdirSync(folder).some((f) => f.startsWith('written-by-kuzu-'))).toBe(true);
  });

  it('can neither read nor write outside it: the service’s keyring, the machine’s files, the service’s /proc', async () => {
    const outside = path.join(dataDir, 'outside');
    mkdirSync(outside);
    for (const file of [secret, '/etc/hostname', '/etc/passwd', `/proc/${process.pid}/environ`, path.join(process.cwd(), 'package-lock.json')]) {
      const access = await graph.fileAccess(file, outside);
      expect(access.read, file).toBe('EACCES');
      expect(access.write, file).toBe('EACCES');
    }
    expect(readdirSync(outside)).toEqual([]);
    for (const dir of [dataDir, tmpdir(), '/tmp']) {
      expect((await graph.fileAccess(secret, dir)).write, dir).toBe('EACCES');
      expect(existsSync(path.join(dir, 'written-by-kuzu-'))).toBe(false);
    }
  });

  it('gets none of the service’s environment', async () => {
    const { env } = await graph.fileAccess(secret, folder);
    expect(env).not.toContain('ADMIN_PASSWORD');
    expect(env.filter((name) => !['HOME', 'TSX_DISABLE_CACHE', 'NODE_CHANNEL_SERIALIZATION_MODE'].includes(name))).toEqual([]);
  });

  it('refuses the hook to a process started without it', async () => {
    const plain = new EmbeddedGraph({ folder: path.join(dataDir, 'graphs', 'plain'), bufferPoolBytes: 32 << 20, label: 'data source "plain"' });
    try {
      await expect(plain.fileAccess(secret, folder)).rejects.toThrow(/no test hook/);
    } finally {
      await plain.close();
    }
  });
});
