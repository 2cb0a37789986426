import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/db-errors.js';
import { OutageWarning } from '../db/outage-warning.js';
import type { Logger } from '../logger.js';
import { AppError, answeredKey } from '../errors.js';

/**
 * The one place errors become answers: `{key, message}` with the catalogue's status. Framework errors
 * (validation, body parsing, bad URLs, malformed HTTP) are mapped onto the catalogue; anything unexpected is a
 * 500 `bug` whose details go to the log with the request id, never to the caller.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  // A database outage is told once in the log, not once per call: a stack per call filled the log (232 lines in
  // 60 s) with nothing new. It is over once a call that needs the database (every signed-in call looks up its
  // session or key) answers without error.
  const outage = new OutageWarning(app.log as Logger, 'the database is unavailable: calls that need it answer 503 until it is back', 'the database answers again');
  app.addHook('onResponse', async (request, reply) => {
    if (outage.failing && reply.statusCode < 400 && request.routeOptions.config.access !== undefined && request.routeOptions.config.access !== 'public') outage.worked();
  });

  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (isDatabaseUnavailable(error)) {
      outage.failed(error);
      reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
      return reply.status(503).send({ key: 'database_unavailable', message: `the database is unavailable right now: try again in ${DATABASE_RETRY_AFTER_SECONDS} seconds` });
    }
    if (error instanceof AppError) {
      return reply.status(error.status).send({ key: answeredKey(error.key), message: error.message, ...(error.field === undefined ? {} : { field: error.field }) });
    }
    if (error.validation) {
      const { field } = error as { field?: string };
      return reply.status(400).send({ key: 'invalid_parameter', message: error.message, ...(field === undefined ? {} : { field }) });
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.status(413).send({ key: 'payload_too_large', message: `the request body is larger than the limit of ${app.initialConfig.bodyLimit} bytes` });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.status(415).send({ key: 'invalid_parameter', message: `the body must be application/json, got ${request.headers['content-type'] ?? 'no Content-Type'}` });
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.status(400).send({ key: 'invalid_parameter', message: 'the body is empty but Content-Type is application/json: send a JSON body' });
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.status(400).send({ key: 'invalid_parameter', message: 'the Content-Length header does not match the body' });
    }
    if (error.statusCode === 400 && (error.name === 'SyntaxError' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY')) {
      return reply.status(400).send({ key: 'invalid_parameter', message: `the body is not valid JSON (${error.message})` });
    }
    // Any other refusal of the request by the framework, at the catalogue's status for what it is (docs/api.md, Errors).
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      if (error.statusCode === 404) return reply.status(404).send({ key: 'api_not_found', message: error.message });
      if (error.statusCode === 413) return reply.status(413).send({ key: 'payload_too_large', message: error.message });
      return reply.status(error.statusCode === 415 ? 415 : 400).send({ key: 'invalid_parameter', message: error.message });
    }
    request.log.error({ err: error }, 'unexpected error');
    return reply.status(500).send({ key: 'bug', message: `An unexpected error occurred; the server log has the details under request id ${request.id}` });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send({ key: 'api_not_found', message: `There is no route ${request.method} ${request.url.split('?')[0]}` });
  });
}

/** What a 503 `database_unavailable` asks the caller to wait: an outage that passes by itself takes seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Longest path parameter the router passes on; the routes' own schemas are far stricter and name the parameter. */
export const MAX_PATH_PARAM_LENGTH = 1024;

const excerpt = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);

/**
 * Fastify's `frameworkErrors` option: what the router refuses before any route or hook runs (it would otherwise
 * answer `{error, code, statusCode}`). Both are a bad path, so 400 `invalid_parameter`; 414 is not in the
 * catalogue, and a parameter that long breaks the same rule as one a little shorter.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = (request.raw.url ?? '').split('?')[0]!;
  if (error.code === 'FST_ERR_BAD_URL') {
    void reply.status(400).send({ key: 'invalid_parameter', message: `the path ${excerpt(path)} is not valid: every % must be followed by two hex digits of UTF-8` });
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void reply.status(400).send({ key: 'invalid_parameter', message: `a path parameter of ${excerpt(path)} is longer than ${MAX_PATH_PARAM_LENGTH} characters` });
  } else {
    request.log.error({ err: error }, 'unexpected router error');
    void reply.status(500).send({ key: 'bug', message: `An unexpected error occurred; the server log has the details under request id ${request.id}` });
  }
}

/**
 * Fastify's `clientErrorHandler` option: a request Node's HTTP parser refuses (headers over `maxHeaderSize`, not
 * HTTP at all) never reaches Fastify, so its answer is written here, as `{key, message}` like every other. 431
 * and 408 keep their status (a proxy or client acts on it) with the catalogue's `invalid_parameter`, as 415 does.
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, `the request line and headers are larger than the limit of ${maxHeaderSize} bytes`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request was not received in time']
        : [400, `the request is not valid HTTP/1.1 (${error.code ?? 'unreadable'})`];
  this.log.debug({ err: error }, 'refused a malformed request');
  const body = JSON.stringify({ key: 'invalid_parameter', message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
