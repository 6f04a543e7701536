import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** A response exactly as it came off the socket: the head's header lines keep their spelling. */
export interface RawResponse {
  status: number;
  /** Header lines as sent, `Name: value`. */
  headerLines: string[];
  body: string;
  /** Everything the connection received (several answers when several requests were sent). */
  raw: string;
}

/** Header values by the name exactly as spelled on the wire (a case-sensitive lookup, as some clients do). */
export function headerValues(response: RawResponse, name: string): string[] {
  return response.headerLines
    .filter((line) => line.slice(0, line.indexOf(':')) === name)
    .map((line) => line.slice(line.indexOf(':') + 1).trim());
}

/** Listens on a free port of the loopback interface and answers its port. */
export async function listenOnFreePort(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/** Sends these bytes on a new connection and reads until the server closes it (send `Connection: close`). */
export async function rawRequest(port: number, bytes: string | Buffer): Promise<RawResponse> {
  const received = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
  const text = received.toString('utf8');
  const headEnd = text.indexOf('\r\n\r\n');
  const head = text.slice(0, headEnd === -1 ? text.length : headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
  let body = headEnd === -1 ? '' : text.slice(headEnd + 4);
  if (head.some((line) => /^transfer-encoding:\s*chunked/i.test(line))) body = unchunk(body);
  return { status, headerLines: head.slice(1), body, raw: text };
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (!(size > 0)) return out;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 4 + size);
  }
}

/** A request's bytes: request line, headers in the order given, and the body with its length. */
export function httpRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}
