import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { EasClientError, presentableUrl, readServerError } from './errors.js';

/** How the client proves who it is (README, "Logins"). */
export type Credentials =
  | { scheme: 'apikey'; apikey: string }
  /** Native login: header `maxauth` = base64(user:password) on `POST /oslc/login`. */
  | { scheme: 'maxauth'; user: string; password: string }
  /** Application-server login: `Authorization: Basic` on `POST /oslc/login`. */
  | { scheme: 'basic'; user: string; password: string }
  /** Application-server form login: `POST /j_security_check`. */
  | { scheme: 'form'; user: string; password: string };

export interface ClientOptions {
  /** Address of the context root, e.g. `http://127.0.0.1:7001/maximo`. */
  baseUrl: string;
  credentials: Credentials;
  /** API root: `oslc` (default) or `api` (the alternate route of deployments with application-server security). */
  apiRoot?: 'oslc' | 'api';
  /** Per-request time limit in milliseconds (default 60 000). */
  timeoutMs?: number;
  /** Replaces the global `fetch` (tests, proxies). */
  fetch?: typeof fetch;
  /**
   * `maxauth` and BASIC: send the credentials on every call instead of logging in once. Such calls open no
   * session on the server (docs/compatibility.md, "Sessions"), so nothing is left behind however the program ends:
   * what short-lived programs (the CLI) want. FORM logins always log in (and `logout` ends the session).
   */
  perRequestCredentials?: boolean;
}

export type QueryValue = string | number | boolean | undefined;

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  /** A JSON value (sent as `application/json`) or raw bytes (sent as `application/octet-stream`). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Read the answer as bytes instead of JSON. */
  binary?: boolean;
  /**
   * For a body of bytes: called as each chunk of it is handed to the connection, with the bytes sent so far and the
   * total (the body is then streamed rather than sent whole).
   */
  onSent?: (sent: number, total: number) => void;
}

function requestBody(body: string | Uint8Array | ReadableStream): BodyInit {
  if (typeof body === 'string' || body instanceof ReadableStream) return body;
  return new Blob([new Uint8Array(body)]);
}

/** The size of the chunks a body streamed with `onSent` is handed over in. */
const SENT_CHUNK_BYTES = 64 * 1024;

/** `bytes` as a stream that reports each chunk as it is read from it (by fetch, as it sends them). */
function reportingStream(bytes: Uint8Array, onSent: (sent: number, total: number) => void): ReadableStream {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= bytes.length) {
        controller.close();
        return;
      }
      const chunk = bytes.slice(sent, sent + SENT_CHUNK_BYTES);
      controller.enqueue(chunk);
      sent += chunk.length;
      onSent(sent, bytes.length);
    },
  });
}

export interface BinaryAnswer {
  bytes: Uint8Array;
  contentType: string | undefined;
  /** File name of a `Content-Disposition: attachment; filename=...` header. */
  filename: string | undefined;
}

/** An answer too large to hold: its body, read by the caller as it arrives, and its headers. */
export interface StreamedAnswer {
  body: Readable;
  headers: Headers;
}

/** Redirects a streamed answer follows, to the same server only (its credentials go with it). */
const STREAM_REDIRECTS = 5;

const DEFAULT_TIMEOUT_MS = 60_000;

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** The header of `maxauth` or BASIC credentials. */
function credentialHeaderOf(credentials: {
  scheme: 'maxauth' | 'basic';
  user: string;
  password: string;
}): Record<string, string> {
  const encoded = base64(`${credentials.user}:${credentials.password}`);
  return credentials.scheme === 'maxauth' ? { maxauth: encoded } : { authorization: `Basic ${encoded}` };
}

function filenameOf(disposition: string | null): string | undefined {
  if (!disposition) return undefined;
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

/**
 * The transport: one logged-in conversation with one server. Logins that open a session (maxauth, BASIC, FORM)
 * log in once and replay the session cookies, as the deployed systems expect of clients; an API key (and, with
 * `perRequestCredentials`, maxauth or BASIC) is sent on every call and opens no session.
 */
export class HttpSession {
  readonly baseUrl: string;
  readonly apiRoot: 'oslc' | 'api';
  private readonly credentials: Credentials;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  /** A `fetch` given in the options: streamed answers go through it too instead of `node:http`. */
  private readonly fetchGiven: boolean;
  private readonly cookies = new Map<string, string>();
  private loggedIn = false;
  private loginInFlight: Promise<void> | undefined;
  /** The credential header sent on every call, when the credentials are per request. */
  private readonly credentialHeader: Record<string, string> | undefined;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiRoot = options.apiRoot ?? 'oslc';
    this.credentials = options.credentials;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetchImpl = options.fetch ?? fetch;
    this.fetchGiven = options.fetch !== undefined;
    const credentials = options.credentials;
    if (credentials.scheme === 'apikey') this.credentialHeader = { apikey: credentials.apikey };
    else if (options.perRequestCredentials === true && credentials.scheme !== 'form')
      this.credentialHeader = credentialHeaderOf(credentials);
  }

  /** `<base>/<apiRoot>/<path>`; an absolute address (an `href` of an answer) is taken as it is. */
  url(path: string, query: Record<string, QueryValue> = {}): URL {
    const url = /^https?:\/\//i.test(path)
      ? new URL(path)
      : new URL(`${this.baseUrl}/${this.apiRoot}/${path.replace(/^\/+/, '')}`);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  /** Logs in now (otherwise the first call does). Does nothing for API keys and per-request credentials. */
  async login(): Promise<void> {
    if (this.credentialHeader !== undefined || this.loggedIn) return;
    this.loginInFlight ??= this.performLogin().finally(() => {
      this.loginInFlight = undefined;
    });
    await this.loginInFlight;
  }

  private async performLogin(): Promise<void> {
    const credentials = this.credentials;
    if (credentials.scheme === 'apikey') return;
    if (credentials.scheme === 'form') {
      const url = new URL(`${this.baseUrl}/j_security_check`);
      const form = new URLSearchParams({ j_username: credentials.user, j_password: credentials.password });
      const response = await this.send('POST', url, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
        redirect: 'manual',
      });
      // Success is a 200 or a redirect to the application; failure a 401 or a redirect to the login error page.
      const location = response.headers.get('location') ?? '';
      if (response.status >= 400 || /loginerror/i.test(location)) {
        await this.failWith('POST', url, response);
      }
      await response.arrayBuffer();
    } else {
      const url = this.url('login', { lean: 1 });
      const response = await this.send('POST', url, { headers: credentialHeaderOf(credentials) });
      if (!response.ok) await this.failWith('POST', url, response);
      await response.arrayBuffer();
    }
    if (this.cookies.size === 0) {
      throw new EasClientError({
        kind: 'protocol',
        message: 'The login was accepted but the server set no session cookie.',
        status: 200,
        request: { method: 'POST', url: this.baseUrl },
      });
    }
    this.loggedIn = true;
  }

  /** Ends the session of a login (no call for API keys, which open none). */
  async logout(): Promise<void> {
    if (!this.loggedIn) return;
    const url = this.url('logout', { lean: 1 });
    try {
      const response = await this.send('POST', url, { headers: this.authHeaders() });
      await response.arrayBuffer();
    } finally {
      this.loggedIn = false;
      this.cookies.clear();
    }
  }

  /** One call; the JSON answer (`undefined` for an empty body), or an `EasClientError`. */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const answer = await this.exchange(method, path, options);
    const text = await answer.response.text();
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (cause) {
      throw new EasClientError({
        kind: 'protocol',
        message: `The answer is not JSON (${answer.response.headers.get('content-type') ?? 'no content type'}).`,
        status: answer.response.status,
        request: { method, url: presentableUrl(answer.url) },
        cause,
      });
    }
  }

  /** One call whose answer is a file. */
  async download(path: string, query: Record<string, QueryValue> = {}): Promise<BinaryAnswer> {
    const { response } = await this.exchange('GET', path, { query });
    return {
      bytes: new Uint8Array(await response.arrayBuffer()),
      contentType: response.headers.get('content-type') ?? undefined,
      filename: filenameOf(response.headers.get('content-disposition')),
    };
  }

  /**
   * One call whose answer is streamed (a backup): the time limit holds until the answer's headers, not for the
   * body, which takes as long as its size needs.
   */
  async stream(path: string, query: Record<string, QueryValue> = {}): Promise<StreamedAnswer> {
    if (this.fetchGiven) {
      const { response } = await this.exchange('GET', path, { query }, { untilHeaders: true });
      if (!response.body) throw new Error('The answer has no body.');
      return {
        body: Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
        headers: response.headers,
      };
    }
    await this.login();
    let url = this.url(path, { lean: 1, ...query });
    const headers: Record<string, string> = { accept: 'application/json', ...this.authHeaders() };
    for (let redirects = 0; ; redirects += 1) {
      const answer = await this.nodeGet(url, headers);
      const status = answer.statusCode ?? 0;
      const location = answer.headers.location;
      if (
        [301, 302, 303, 307, 308].includes(status) &&
        location !== undefined &&
        redirects < STREAM_REDIRECTS
      ) {
        answer.resume();
        const next = new URL(location, url);
        if (next.origin !== url.origin)
          throw new EasClientError({
            kind: 'protocol',
            message: `The answer redirects to another server (${next.origin}); the credentials are not sent there.`,
            status,
            request: { method: 'GET', url: presentableUrl(url) },
          });
        url = next;
        continue;
      }
      const answerHeaders = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value])
          answerHeaders.append(name, one);
      }
      if (status < 200 || status > 299) {
        let text = '';
        for await (const chunk of answer) text += (chunk as Buffer).toString('utf8');
        throw this.serverError('GET', url, status, answer.statusMessage ?? '', text);
      }
      if (this.loggedIn) for (const line of answerHeaders.getSetCookie()) this.rememberCookie(line);
      return { body: answer, headers: answerHeaders };
    }
  }

  /**
   * A GET through `node:http`, its body the socket's reads as they come: Node's `fetch` (undici) cost the CLI more
   * CPU than writing the archive did, copying what it buffered and parsing in WebAssembly (bench/README.md,
   * "Backup"). The time limit holds until the answer's headers, as for `send` with `untilHeaders`.
   */
  private nodeGet(url: URL, headers: Record<string, string>): Promise<IncomingMessage> {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method: 'GET',
        headers,
      });
      const timer = setTimeout(() => request.destroy(new Error('no answer in time')), this.timeoutMs);
      request.once('response', (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      request.once('error', (cause) => {
        clearTimeout(timer);
        reject(
          new EasClientError({
            kind: 'connection',
            message: `No answer from ${url.origin}: ${cause.message}`,
            status: 0,
            request: { method: 'GET', url: presentableUrl(url) },
            cause,
          }),
        );
      });
      request.end();
    });
  }

  private async exchange(
    method: string,
    path: string,
    options: RequestOptions,
    limit: { untilHeaders?: boolean } = {},
  ): Promise<{ response: Response; url: URL }> {
    await this.login();
    const url = this.url(path, { lean: 1, ...options.query });
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.authHeaders(),
      ...options.headers,
    };
    let body: string | Uint8Array | ReadableStream | undefined;
    if (options.body instanceof Uint8Array) {
      body = options.onSent ? reportingStream(options.body, options.onSent) : options.body;
      headers['content-type'] ??= 'application/octet-stream';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await this.send(method, url, { headers, body, ...limit });
    if (!response.ok) await this.failWith(method, url, response);
    return { response, url };
  }

  private authHeaders(): Record<string, string> {
    const headers: Record<string, string> = { ...this.credentialHeader };
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
    return headers;
  }

  private async send(
    method: string,
    url: URL,
    init: {
      headers: Record<string, string>;
      body?: string | Uint8Array | ReadableStream | undefined;
      redirect?: RequestRedirect;
      untilHeaders?: boolean;
    },
  ): Promise<Response> {
    let response: Response;
    const headersDue = new AbortController();
    const timer = init.untilHeaders
      ? setTimeout(() => headersDue.abort(new Error('no answer in time')), this.timeoutMs)
      : undefined;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers: init.headers,
        ...(init.body !== undefined && { body: requestBody(init.body) }),
        // A streamed body is sent as it is read (fetch requires saying so).
        ...(init.body instanceof ReadableStream && { duplex: 'half' }),
        redirect: init.redirect ?? 'follow',
        signal: init.untilHeaders ? headersDue.signal : AbortSignal.timeout(this.timeoutMs),
      });
    } catch (cause) {
      const reason =
        cause instanceof Error && cause.cause instanceof Error ? cause.cause.message : String(cause);
      throw new EasClientError({
        kind: 'connection',
        message: `No answer from ${url.origin}: ${reason}`,
        status: 0,
        request: { method, url: presentableUrl(url) },
        cause,
      });
    } finally {
      clearTimeout(timer);
    }
    // Only a login's cookies are kept: an answer to per-request credentials carries a sealed cookie too, which would
    // store a session if replayed (docs/security.md, "Session cookies"), one per call and never logged out.
    if (this.loginInFlight !== undefined || this.loggedIn)
      for (const line of response.headers.getSetCookie()) this.rememberCookie(line);
    return response;
  }

  private rememberCookie(line: string): void {
    const [pair = '', ...attributes] = line.split(';');
    const separator = pair.indexOf('=');
    if (separator <= 0) return;
    const name = pair.slice(0, separator).trim();
    const value = pair.slice(separator + 1).trim();
    const expired = attributes.some((attribute) => {
      const [key = '', setting = ''] = attribute.split('=');
      const lower = key.trim().toLowerCase();
      return (
        (lower === 'max-age' && Number(setting) <= 0) ||
        (lower === 'expires' && Date.parse(setting) < Date.now())
      );
    });
    if (expired || value === '') this.cookies.delete(name);
    else this.cookies.set(name, value);
  }

  private async failWith(method: string, url: URL, response: Response): Promise<never> {
    const text = await response.text().catch(() => '');
    throw this.serverError(method, url, response.status, response.statusText, text);
  }

  /** The error of an answer with an error status, from its body's error object when it has one. */
  private serverError(
    method: string,
    url: URL,
    status: number,
    statusText: string,
    text: string,
  ): EasClientError {
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const fields = readServerError(body);
    // Some deployments send the text without its code, some with `<code> - ` in front (docs/cli.md).
    const reasonCode =
      fields?.reasonCode ?? /\b(BMXAA\d{4,5}[EWI]|EAS\d{4}[EWI])\b/.exec(fields?.message ?? '')?.[1];
    return new EasClientError({
      kind: 'server',
      message: fields?.message ?? `${status} ${statusText}`.trim(),
      status,
      request: { method, url: presentableUrl(url) },
      reasonCode,
      attrName: fields?.errorattrname,
      attrValue: fields?.errattrvalue,
    });
  }
}
