import { cpSync } from 'node:fs';
import path from 'node:path';
import kuzu from 'kuzu';

/**
 * The graph benches' ceiling: Kùzu called directly in the bench's own process, on a copy of a data source's loaded
 * embedded graph (the service's Kùzu process holds the original's lock), with the service's buffer pool.
 */
export class KuzuCeiling {
  private constructor(
    /** The copy's folder: other readers may open it read-only beside this one. */
    readonly folder: string,
    private readonly database: kuzu.Database,
    private readonly conn: kuzu.Connection,
  ) {}

  /** Copies `dataDir`'s graph of `source` into `intoDir` and opens it read-only. */
  static open(dataDir: string, source: string, intoDir: string, memoryMb: number): KuzuCeiling {
    const folder = path.join(intoDir, 'ceiling-graph');
    cpSync(path.join(dataDir, 'graphs', source, 'graph'), folder, { recursive: true });
    const database = new kuzu.Database(folder, memoryMb * 1024 * 1024, true, true);
    return new KuzuCeiling(folder, database, new kuzu.Connection(database));
  }

  /**
   * Runs `query` and reads every row as the service's Kùzu process reads them (hasNext/getNextSync), each row made and
   * let go: kuzu's getAll awaits a trip to its thread pool per row, which made it slower than the service's own
   * reading of the same rows (6-12 s for the alert bench's 60,000), a poor ceiling. Answers the rows read.
   */
  async readAll(query: string): Promise<number> {
    const answer = await this.conn.query(query);
    const result = Array.isArray(answer) ? answer[0]! : answer;
    let rows = 0;
    while (result.hasNext()) {
      result.getNextSync();
      rows++;
    }
    result.close();
    return rows;
  }

  async close(): Promise<void> {
    await this.conn.close().catch(() => undefined);
    await this.database.close().catch(() => undefined);
  }
}
