import { errors, type MaximoError } from '../errors.js';

/** Fields of a database error (node-postgres and PGlite raise the same ones). */
interface DatabaseErrorFields {
  code?: unknown;
  column?: unknown;
}

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';
/** A foreign key with ON DELETE RESTRICT on PostgreSQL 17 (PGlite); 15 raises 23503 for it. */
const RESTRICT_VIOLATION = '23001';

/** Whether a database error refuses a write because a row is referenced (or refers to one missing). */
export const isForeignKeyViolation = (code: unknown): boolean =>
  code === FOREIGN_KEY_VIOLATION || code === RESTRICT_VIOLATION;
const NOT_NULL_VIOLATION = '23502';
/** Class 22 (data exception: out of range, too long, bad date) and class 23 (integrity constraint violation). */
const INPUT_CLASSES = ['22', '23'];

/**
 * The last resort of the error contract: a constraint or data error that the database raised because validation
 * let a value through is the client's bad input, answered 400 and never 500. The database's own text stays out of
 * the answer (it names tables); the column, when the database names one, is the attribute. Validation catches these
 * first (src/oslc/column-limits.ts); reaching this mapping is logged as a gap (docs/errors.md, EAS0004E).
 */
export function databaseInputError(error: unknown): MaximoError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, column } = error as DatabaseErrorFields;
  if (typeof code !== 'string' || code.length !== 5 || !INPUT_CLASSES.includes(code.slice(0, 2))) {
    return undefined;
  }
  const attrName = typeof column === 'string' && column !== '' ? column : undefined;
  if (isForeignKeyViolation(code)) return errors.stillReferenced('record', 'other');
  switch (code) {
    case UNIQUE_VIOLATION:
      return errors.duplicateKey('the key values sent', '', '');
    case NOT_NULL_VIOLATION:
      return errors.badRequest(`A value is required for the attribute ${attrName ?? 'sent'}.`, {
        ...(attrName !== undefined && { attrName }),
      });
    default:
      return errors.badRequest(
        code.startsWith('22')
          ? 'A value in the request is out of the range its attribute can hold.'
          : 'A value in the request breaks a rule of the stored data.',
        { ...(attrName !== undefined && { attrName }) },
      );
  }
}

/** Whether an error came from the database (it carries an SQLSTATE code), as opposed to the framework or the code. */
export function isDatabaseError(error: unknown): boolean {
  const code = (error as DatabaseErrorFields | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
