import { isForeignKeyViolation } from '../db/constraint-errors.js';
import { errors, MaximoError } from '../errors.js';

const PG_UNIQUE_VIOLATION = '23505';
const PG_DATA_EXCEPTION_CLASS = '22';

/** A database error as the refusal a client gets (a MaximoError), or the error itself when it is none of them. */
export function translateDatabaseError(error: unknown): unknown {
  if (error instanceof MaximoError) return error;
  const code = (error as { code?: unknown }).code;
  if (code === PG_UNIQUE_VIOLATION) return errors.duplicateKey('the key values sent', '', '');
  if (isForeignKeyViolation(code)) return errors.stillReferenced('record', 'other');
  // Class 22 (data exception): a value the client sent that validation let through but the column cannot hold,
  // such as a number beyond the column's precision. Bad input, not a server failure; the database text stays out.
  if (typeof code === 'string' && code.startsWith(PG_DATA_EXCEPTION_CLASS)) {
    return errors.badRequest('A value in the request is out of the range its attribute can hold.');
  }
  return error;
}
