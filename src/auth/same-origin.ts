import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

// Methods that change nothing: a browser may send them from anywhere, as links, images and forms do.
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses a request that changes something, authenticated by the session cookie, when the browser says it came from
 * another origin. The cookie is SameSite=Lax, which keeps it off requests from other *sites*, but a page on another
 * port of the same host is the same site: with `fetch(…, {mode: 'no-cors'})` it made the admin's browser ping a
 * webhook and redeliver a delivery (bodiless POSTs, which the JSON-only rule does not cover). Browsers say where a
 * request came from in `Sec-Fetch-Site` (every current one) and `Origin`: anything but this origin, or the public
 * base URL's, is refused. A request with neither header is not from a browser page; API keys are never checked
 * (a page cannot make a browser send one).
 *
 * A GET is let through unless its route says it changes something (`changesState`: the logout LKE's client sends as
 * a GET). A browser sends no `Origin` on a GET link or image, so there an older browser's `Referer` stands in.
 */
export function refuseCrossOriginSession(request: FastifyRequest, publicOrigin: string): void {
  if (request.principal?.via !== 'session') return;
  if (SAFE_METHODS.has(request.method) && !request.routeOptions.config.changesState) return;
  const fetchSite = request.headers['sec-fetch-site'];
  const origin = request.headers.origin ?? (request.method === 'GET' ? originOf(request.headers.referer) : undefined);
  const ownOrigin = `${request.protocol}://${request.host}`;
  const refused =
    fetchSite !== undefined ? fetchSite !== 'same-origin' && fetchSite !== 'none' : origin !== undefined && origin !== ownOrigin && origin !== publicOrigin;
  if (refused) {
    throw new AppError(
      'forbidden',
      `${request.method} from another origin with a session cookie is refused: use the console on ${publicOrigin}, or an API key`,
    );
  }
}

/** The origin of a Referer; one that is not a URL counts as another origin. */
function originOf(referer: string | undefined): string | undefined {
  if (referer === undefined) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return 'null';
  }
}
