/** The request a failure belongs to: method and address only, never a header or a body (credentials live there). */
export interface FailedRequest {
  method: string;
  /** The address with credential query parameters (`apikey`, `_lid`, `_lpwd`) removed. */
  url: string;
}

/** The fields of the server's error object that clients act on (docs/errors.md). */
export interface ServerErrorFields {
  reasonCode?: string;
  message?: string;
  statusCode?: string;
  errorattrname?: string;
  errattrvalue?: string;
}

export type EasClientErrorKind =
  /** The server answered with an error object or an error status. */
  | 'server'
  /** No answer: the connection failed, was cut, or timed out. */
  | 'connection'
  /** An answer that is not what the interface promises (not JSON where JSON is due). */
  | 'protocol';

/**
 * Every failure of the SDK. `reasonCode` is the server's code (`BMXAA0578E`, `EAS0070E`, ...) when it sent one;
 * `status` the HTTP status (0 when there was no answer).
 */
export class EasClientError extends Error {
  override readonly name = 'EasClientError';
  readonly kind: EasClientErrorKind;
  readonly reasonCode: string | undefined;
  readonly status: number;
  readonly request: FailedRequest;
  /** `errorattrname` / `errattrvalue` of the error object, when present (a deploy needing admin mode names its package). */
  readonly attrName: string | undefined;
  readonly attrValue: string | undefined;

  constructor(options: {
    kind: EasClientErrorKind;
    message: string;
    status: number;
    request: FailedRequest;
    reasonCode?: string | undefined;
    attrName?: string | undefined;
    attrValue?: string | undefined;
    cause?: unknown;
  }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = options.kind;
    this.status = options.status;
    this.request = options.request;
    this.reasonCode = options.reasonCode;
    this.attrName = options.attrName;
    this.attrValue = options.attrValue;
  }
}

const CREDENTIAL_PARAMETERS = ['apikey', '_lid', '_lpwd', 'maxauth'];

/** The address as it may be shown: credential query parameters are dropped. */
export function presentableUrl(url: URL): string {
  const copy = new URL(url);
  for (const name of [...copy.searchParams.keys()]) {
    if (CREDENTIAL_PARAMETERS.includes(name.toLowerCase())) copy.searchParams.delete(name);
  }
  copy.username = '';
  copy.password = '';
  return copy.toString();
}

function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** The error object of a body, in either JSON form (`Error` with lean=1, `oslc:Error` with lean=0). */
export function readServerError(body: unknown): ServerErrorFields | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const error = (record.Error ?? record['oslc:Error']) as Record<string, unknown> | undefined;
  if (typeof error !== 'object' || error === null) return undefined;
  const fields: ServerErrorFields = {};
  const reasonCode = asText(error.reasonCode ?? error['spi:reasonCode']);
  const message = asText(error.message ?? error['oslc:message']);
  const statusCode = asText(error.statusCode ?? error['oslc:statusCode']);
  const attrName = asText(error.errorattrname);
  const attrValue = asText(error.errattrvalue);
  if (reasonCode !== undefined) fields.reasonCode = reasonCode;
  if (message !== undefined) fields.message = message;
  if (statusCode !== undefined) fields.statusCode = statusCode;
  if (attrName !== undefined) fields.errorattrname = attrName;
  if (attrValue !== undefined) fields.errattrvalue = attrValue;
  return fields;
}
