import type { Socket } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyHttpOptions, FastifyReply } from 'fastify';
import type { AppConfig } from '../config.js';
import { errorBody, errors, type MaximoError } from '../errors.js';

/**
 * Limits of the HTTP listener (docs/operations.md): a request whose headers or body do not arrive in time is
 * answered 408 and closed, so slow clients cannot hold connections (and file descriptors) indefinitely; headers
 * are bounded in size (431); connections above a cap are closed as they arrive. Refusals the HTTP parser makes
 * before any route runs are answered with the error object like every other failure.
 */
export function listenerOptions(
  config: AppConfig,
  responseClass: typeof ServerResponse,
): FastifyHttpOptions<Server> {
  const { limits } = config;
  const seconds = (ms: number) => Number((ms / 1000).toFixed(3));
  const refuse = (error: NodeJS.ErrnoException): MaximoError => {
    switch (error.code) {
      case 'ERR_HTTP_REQUEST_TIMEOUT':
        return errors.requestTimeout(seconds(limits.headersTimeoutMs), seconds(limits.requestTimeoutMs));
      case 'HPE_HEADER_OVERFLOW':
        return errors.headersTooLarge(limits.maxHeaderBytes);
      default:
        return errors.badRequest('The request is not valid HTTP.');
    }
  };
  // No request (and so no host) is known here: the link is relative to the server unless a public URL is set.
  const messagesBase = `${config.publicUrl?.replace(/\/$/, '') ?? ''}${config.contextRoot}/oslc/error/messages`;
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Requests already on a connection when shutdown starts are served (the shutdown itself is bounded).
    return503OnClosing: false,
    http: {
      ServerResponse: responseClass,
      headersTimeout: limits.headersTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      // Node checks the timeouts on this interval (30 s by default, which would stretch every limit).
      connectionsCheckingInterval: Math.min(1000, Math.max(100, limits.headersTimeoutMs / 4)),
    },
    clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket) {
      if (error.code === 'ECONNRESET' || socket.destroyed || refused.has(socket)) return;
      refused.add(socket);
      const maximo = refuse(error);
      const body = JSON.stringify(errorBody(maximo, { messagesBase, lean: true }));
      const refusal =
        `HTTP/1.1 ${maximo.status} ${STATUS_TEXT[maximo.status] ?? 'Bad Request'}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`;
      afterPendingAnswers(socket, (answered) => {
        if (socket.destroyed) return;
        // An answer cut short (it was being written when the bytes that follow failed) is not followed by more.
        if (socket.writable && answered) socket.end(refusal, () => socket.destroy());
        else socket.destroy();
      });
    },
  };
}

/** Sockets whose refusal is under way: the parser may fail again on the bytes that follow. */
const refused = new WeakSet<Socket>();

type PendingAnswer = ServerResponse & { writableFinished: boolean };

/**
 * Runs `then` once every answer to a complete request on this connection is written, in request order
 * (docs/compatibility.md, "Answer order"): bytes that follow a complete request and are not HTTP (a body after a
 * DELETE without Content-Length) are refused only after the request's own answer. `answered` is false when no
 * refusal may follow: an answer was cut short (its connection failed), or the failing request's own answer has
 * begun.
 */
function afterPendingAnswers(socket: Socket, then: (answered: boolean) => void): void {
  const pending = (socket as Socket & { _httpMessage?: PendingAnswer | null })._httpMessage;
  if (!pending || pending.writableFinished) {
    then(true);
    return;
  }
  // The failure is that of the request being answered (its body did not arrive in time): refused at once.
  if (!pending.req.complete) {
    then(!pending.headersSent);
    return;
  }
  let settled = false;
  const next = (answered: boolean) => {
    if (settled) return;
    settled = true;
    // Node hands the connection to the next queued answer in its own 'finish' listener, which runs first.
    if (answered) afterPendingAnswers(socket, then);
    else then(false);
  };
  pending.once('finish', () => next(true));
  pending.once('close', () => next(pending.writableFinished));
}

/**
 * Settings of the server object itself: the connection cap, and the answer to an `Expect` header other than
 * `100-continue`, which Node would otherwise send as a bare 417.
 */
export function guardListener(server: Server, config: AppConfig): void {
  server.maxConnections = config.limits.maxConnections;
  capConnectionsPerAddress(server, config.limits.maxConnectionsPerAddress);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    // A request without Content-Length and Transfer-Encoding has no body (RFC 9112, 6.3): the parser completes it
    // with its headers, before any answer can finish, so nothing can be left to discard. Most requests are such
    // GETs, and a listener per response is a measurable part of their cost (bench/README.md, "Cost account").
    const { headers } = request;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return;
    // Before Node's own listener, which would discard the rest without counting it.
    response.prependOnceListener('finish', () => {
      if (!request.complete) discardRestOfBody(request);
    });
  });
  const messagesBase = `${config.publicUrl?.replace(/\/$/, '') ?? ''}${config.contextRoot}/oslc/error/messages`;
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const maximo = errors.expectationFailed(String(request.headers.expect ?? ''));
    const body = JSON.stringify(errorBody(maximo, { messagesBase, lean: true }));
    response.writeHead(maximo.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    response.end(body);
  });
}

/**
 * One address cannot take every connection (docs/operations.md, "Connections per address"): slow requests from one
 * address (a flood of trickled bodies) would otherwise hold them all until the request timeout, and every other
 * client would go unanswered. Above its cap, an address's new connections are closed as they arrive, without an
 * answer, like those above EAS_MAX_CONNECTIONS. The address is the socket's peer: behind a proxy, the proxy's.
 */
function capConnectionsPerAddress(server: Server, cap: number): void {
  const held = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return;
    const count = held.get(address) ?? 0;
    if (count >= cap) {
      socket.destroy();
      return;
    }
    held.set(address, count + 1);
    socket.once('close', () => {
      const left = (held.get(address) ?? 1) - 1;
      if (left > 0) held.set(address, left);
      else held.delete(address);
    });
  });
}

/**
 * How much of a body answered before it was read (413 from its Content-Length, 401 before the body) is read
 * and discarded before the connection is closed (docs/compatibility.md, "Refused bodies").
 */
export const REFUSED_BODY_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * A client still sending the body of a request already answered reads that answer only if the connection stays
 * open until it has sent the body: closed under it, its next write fails (EPIPE) and many clients then report that
 * instead of the answer. Node reads and discards the rest of such a body on a kept-alive connection; this bounds
 * it, besides the request timeout: beyond REFUSED_BODY_DRAIN_BYTES the connection is closed. A reader of the request
 * set now also keeps Node from discarding it uncounted.
 */
function discardRestOfBody(request: IncomingMessage): void {
  let discarded = 0;
  const count = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > REFUSED_BODY_DRAIN_BYTES) {
      request.off('data', count);
      request.socket.destroy();
    }
  };
  request.on('data', count);
  request.resume();
}

/**
 * Keeps the connection of a body refused as too large (413) open, so that the rest of the body is read and
 * discarded (discardRestOfBody) rather than the connection closed under a client still sending it.
 */
export function keepReadingRefusedBody(reply: FastifyReply): void {
  if (!reply.request.raw.complete) reply.removeHeader('connection');
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
