import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/**
 * The one place errors become answers: `{key, message}` with the catalogue's status. Framework errors
 * (validation, body parsing) are mapped onto the catalogue; anything unexpected is a 500 `bug` whose
 * details go to the log with the request id, never to the caller.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      return reply.status(error.status).send({ key: error.key, message: error.message });
    }
    if (error.validation) {
      return reply.status(400).send({ key: 'invalid_parameter', message: error.message });
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
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.status(error.statusCode).send({ key: 'invalid_parameter', message: error.message });
    }
    request.log.error({ err: error }, 'unexpected error');
    return reply.status(500).send({ key: 'bug', message: `An unexpected error occurred; the server log has the details under request id ${request.id}` });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send({ key: 'api_not_found', message: `There is no route ${request.method} ${request.url.split('?')[0]}` });
  });
}
