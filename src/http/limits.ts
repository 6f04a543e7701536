import type { Socket } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyHttpOptions } from 'fastify';
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
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
      if (socket.writable && !response?.headersSent) {
        const maximo = refuse(error);
        const body = JSON.stringify(errorBody(maximo, { messagesBase, lean: true }));
        socket.write(
          `HTTP/1.1 ${maximo.status} ${STATUS_TEXT[maximo.status] ?? 'Bad Request'}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
            `Connection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
  };
}

/**
 * Settings of the server object itself: the connection cap, and the answer to an `Expect` header other than
 * `100-continue`, which Node would otherwise send as a bare 417.
 */
export function guardListener(server: Server, config: AppConfig): void {
  server.maxConnections = config.limits.maxConnections;
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

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
