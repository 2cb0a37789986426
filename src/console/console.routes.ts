import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

/**
 * The web console's pages: each answers the same index.html and the client-side router picks the page. They sit
 * beside the API, never under `/api/` or at `/health`, so they shadow nothing.
 */
export const CONSOLE_PAGES = [
  '/',
  '/webhooks',
  '/webhooks/:id',
  '/deliveries',
  '/receiver-example',
  '/settings',
  '/users',
  '/alerts',
  '/sources/:sourceKey/alerts',
  // An alert, and `new`.
  '/sources/:sourceKey/alerts/:alertId',
  // Its runs and its cases.
  '/sources/:sourceKey/alerts/:alertId/:tab',
  '/alerts/:alertId/case/:caseId',
  // The case inbox, every signed-in user's.
  '/cases',
  // Groups and their access rights, per data source; the audit log.
  '/groups',
  '/sources/:sourceKey/groups',
  '/sources/:sourceKey/groups/:groupId',
  '/audit',
] as const;
/** The built scripts and styles (names carry a content hash, so they are cached for good). */
export const CONSOLE_ASSETS = '/assets/*';

/** Where `npm run build` puts the console: dist/public, beside this module's compiled dist/console/. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../public/', import.meta.url));

export interface ConsoleRoutesOptions {
  /** The built console (index.html and assets/); defaults to DEFAULT_CONSOLE_DIR. */
  directory?: string;
}

// Only what the console itself loads: its own scripts, styles and API calls. Nothing inline (the build emits none),
// nothing from another origin (the machines running it are often offline), never framed (clickjacking).
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
} as const;

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
}

interface BuiltConsole {
  index: Buffer;
  assets: Map<string, Asset>;
}

const NOT_BUILT = 'The web console is not built here: run `npm run build` (`npm start` does it), then restart the service.\n';

/**
 * Reads the built console once, at start: a few hundred KiB kept in memory, served from a map of known names, so
 * no request path ever reaches the file system (nothing to traverse) and no static-file plugin is needed.
 */
function readBuiltConsole(directory: string): BuiltConsole | undefined {
  const indexFile = path.join(directory, 'index.html');
  if (!existsSync(indexFile)) return undefined;
  const assets = new Map<string, Asset>();
  const assetsDir = path.join(directory, 'assets');
  if (existsSync(assetsDir)) {
    for (const name of readdirSync(assetsDir, { recursive: true, encoding: 'utf8' })) {
      const file = path.join(assetsDir, name);
      const type = CONTENT_TYPES[path.extname(name)];
      if (type === undefined) continue;
      assets.set(name.split(path.sep).join('/'), { body: readFileSync(file), type });
    }
  }
  return { index: readFileSync(indexFile), assets };
}

export const consoleRoutes: FastifyPluginAsync<ConsoleRoutesOptions> = async (app, options) => {
  const built = readBuiltConsole(options.directory ?? DEFAULT_CONSOLE_DIR);
  // Hidden from the OpenAPI document: pages, not API.
  const route = { schema: { hide: true }, config: { access: 'public' as const, sessionless: true } };

  const page = async (_request: unknown, reply: FastifyReply) => {
    reply.headers(SECURITY_HEADERS);
    if (!built) return reply.code(404).type('text/plain; charset=utf-8').send(NOT_BUILT);
    // The page is small and names hashed assets: always revalidate it, so a new build is seen at once.
    return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(built.index);
  };
  for (const url of CONSOLE_PAGES) app.get(url, route, page);

  app.get<{ Params: { '*': string } }>(CONSOLE_ASSETS, route, async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    const asset = built?.assets.get(request.params['*']);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('not found\n');
    return reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body);
  });
};
