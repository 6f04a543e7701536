// Requests that may take many minutes (a deploy of 1,000,000 records): through node:http, which sets no limit on
// how long a response's headers or body may take. Node's `fetch` (undici) gives up on headers after 300 s and on a
// pause in the body after 300 s, and undici is not a dependency of the project to configure its agent.
import { request, type IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

export interface LongResponse {
  status: number;
  text: string;
}

/** A request whose body is a string or a stream; the answer's body is read whole as text. */
export function longRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Readable },
): Promise<LongResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: init.method ?? 'GET', headers: init.headers, agent: false });
    outgoing.on('error', reject);
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    const { body } = init;
    if (body === undefined) outgoing.end();
    else if (typeof body === 'string') outgoing.end(body);
    else {
      body.on('error', (error) => outgoing.destroy(error));
      body.pipe(outgoing);
    }
  });
}

/** The response of a GET whose body is to be streamed (a download); rejects on a non-2xx status. */
export function longResponse(url: string, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers, agent: false });
    outgoing.on('error', reject);
    outgoing.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) return resolve(response);
      response.resume();
      reject(new Error(`HTTP ${status}`));
    });
    outgoing.end();
  });
}
