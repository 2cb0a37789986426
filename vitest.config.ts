import { configDefaults, defineConfig } from 'vitest/config';

// The whole suite runs twice (but test/graph/, which needs no database): once on the embedded database (PGlite), once on PostgreSQL; the web console's browser
// tests (test/console/) once, against the compiled service on its embedded database.
// Each test file gets its own database, cloned from a template migrated once per run (test/support/global-setup.ts).
export default defineConfig({
  test: {
    globalSetup: ['./test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      // A PostgreSQL server's connection failures are PostgreSQL's alone.
      { extends: true, test: { name: 'pglite', env: { TEST_DB: 'pglite' }, include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/console/**', 'test/package/**', 'test/operations/database-connection-failures.test.ts'] } },
      // test/graph/ drives the graph engines alone, with no service database: once is enough; so does the README's
      // demo, which brings its own embedded database.
      { extends: true, test: { name: 'postgres', env: { TEST_DB: 'postgres' }, include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/console/**', 'test/graph/**', 'test/package/**', 'test/operations/readme-demo.test.ts'] } },
      // test/package/ builds the image's steps, installs the npm package and renders the manifests: once, on PostgreSQL.
      { extends: true, test: { name: 'package', env: { TEST_DB: 'postgres' }, include: ['test/package/**/*.test.ts'], testTimeout: 180_000, hookTimeout: 900_000 } },
      { extends: true, test: { name: 'console', env: { TEST_DB: 'pglite' }, include: ['test/console/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 180_000 } },
    ],
  },
});
