import type { FastifyReply } from 'fastify';

/**
 * Sends a JSON body with `Content-Type: application/json` exactly (docs/compatibility.md): Fastify appends
 * `; charset=utf-8` to serialized objects, but leaves a Buffer's content type as set.
 */
export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return sendEncodedJson(reply, Buffer.from(JSON.stringify(body)), status);
}

/** `sendJson` of a body already encoded (an answer kept in memory, which is sent as it is and never changed). */
export function sendEncodedJson(reply: FastifyReply, body: Buffer, status = 200): FastifyReply {
  return reply.code(status).header('content-type', 'application/json').send(body);
}
