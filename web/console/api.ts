import type { ConsoleModel } from './model.js';

/** An error object of the API (docs/errors.md), shown as `<reason code> - <message>`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reasonCode: string,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

/** The error object of an answer, in either of its forms (lean or namespaced). */
async function errorOf(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => ({}))) as Json;
  const lean = body.Error as Json | undefined;
  const namespaced = body['oslc:Error'] as Json | undefined;
  const reasonCode = String(lean?.reasonCode ?? namespaced?.['spi:reasonCode'] ?? `HTTP ${response.status}`);
  const message = String(lean?.message ?? namespaced?.['oslc:message'] ?? response.statusText);
  return new ApiError(response.status, reasonCode, message);
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** Raw bytes (an upload), sent with this content type. */
  file?: { data: Blob; contentType: string };
  headers?: Record<string, string>;
}

/**
 * The API of this server, called as any client does: the session cookie, and on writes the session's CSRF token
 * (the console signs in with `csrf=1`, docs/console.md).
 */
export class Api {
  constructor(private readonly model: ConsoleModel) {}

  get base(): string {
    return this.model.base;
  }

  /** `path` below the context root: `/oslc/whoami`. */
  async call<T = Json>(path: string, options: CallOptions = {}): Promise<T> {
    const method = options.method ?? 'GET';
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (method !== 'GET' && this.model.csrfToken) headers.csrftoken = this.model.csrfToken;
    let body: BodyInit | undefined;
    if (options.file) {
      headers['content-type'] = options.file.contentType;
      body = options.file.data;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await fetch(`${this.model.base}${path}`, {
      method,
      headers,
      body,
      credentials: 'same-origin',
    });
    if (!response.ok) {
      const error = await errorOf(response);
      // The session ended (signed out elsewhere, ended by an administrator, timed out): sign in again, and return.
      if (response.status === 401) {
        const returnTo = encodeURIComponent(location.pathname);
        location.assign(`${this.model.base}/console/signin?returnTo=${returnTo}`);
      }
      throw error;
    }
    if (response.status === 204) return {} as T;
    const text = await response.text();
    return (text === '' ? {} : JSON.parse(text)) as T;
  }

  /** The members of an object structure's collection, lean, with hrefs relative to the context root. */
  async members(structure: string, query: string): Promise<Json[]> {
    const answer = await this.call<{ member?: Json[] }>(
      `/oslc/os/${structure}?lean=1&relativeuri=1&${query}`,
    );
    return answer.member ?? [];
  }

  /** How many records a collection holds. */
  async count(structure: string): Promise<number> {
    const answer = await this.call<{ totalCount?: number }>(`/oslc/os/${structure}?lean=1&count=1`);
    return answer.totalCount ?? 0;
  }
}

/** `<reason code> - <message>` of any failure (the message of an API error starts with its code already). */
export function describeError(error: unknown): string {
  if (error instanceof ApiError)
    return error.message.startsWith(error.reasonCode)
      ? error.message
      : `${error.reasonCode} - ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
