import type { FastifyReply } from 'fastify';

/**
 * 204 with no body at all. A route typed by its schema wants `send(null)` for `204: Type.Null()`, which would
 * serialise `null` and run the serialisation hooks; `send()` sends nothing, as the answer says.
 */
export function noContent(reply: FastifyReply): FastifyReply {
  return reply.status(204).send();
}
