import type { FastifyRequest } from 'fastify';
import { originOf } from '../audit/context.js';
import { errors } from '../errors.js';
import type { WriteOptions } from './resource-writes.js';

/** Longest `transactionid` kept (the column's width). */
const MAX_TRANSACTION_ID = 256;

/**
 * The `transactionid` and `If-Match` headers of a write (docs/compatibility.md, "Writes"), and the request as the
 * write's origin for the audit trail (its facts read only if a record is made).
 */
export function writeOptionsOf(request: FastifyRequest): WriteOptions {
  const transactionId = headerText(request.headers.transactionid);
  const ifMatch = headerText(request.headers['if-match']);
  if (transactionId !== undefined && transactionId.length > MAX_TRANSACTION_ID) {
    throw errors.badRequest(
      `The transactionid header cannot be longer than ${MAX_TRANSACTION_ID} characters.`,
      {
        attrName: 'transactionid',
      },
    );
  }
  return {
    origin: originOf(request),
    ...(transactionId !== undefined && { transactionId }),
    ...(ifMatch !== undefined && { ifMatch }),
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  const text = (Array.isArray(value) ? value.join(',') : value)?.trim();
  return text === undefined || text === '' ? undefined : text;
}
