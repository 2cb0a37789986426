import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Built by scripts/build.mjs into dist/public, which src/console/console.routes.ts serves. `npx vite --config
// console/vite.config.ts` runs a dev server that sends the API calls to a service on localhost:3000.
// Preact's JSX needs no plugin: Vite's own transform, told where the JSX runtime is (the preset would add Babel
// and hot reloading, which a served build never uses).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/public/', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // Everything comes from the service itself: no inlined data URLs to allow beyond img-src.
    assetsInlineLimit: 0,
    target: 'es2022',
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://localhost:3000', '/health': 'http://localhost:3000' } },
});
