import type { AttributeDef, MaxType } from '../metadata/types.js';

/** A value as stored: what the repository writes and reads. */
export type StoredValue = string | number | boolean | Date | null;

/** A value as sent in JSON. */
export type JsonValue = string | number | boolean | null;

export type ConversionResult = { ok: true; value: StoredValue } | { ok: false; expected: string };

const NUMERIC_TYPES: ReadonlySet<MaxType> = new Set(['INTEGER', 'BIGINT', 'DECIMAL', 'AMOUNT']);
const TEXT_TYPES: ReadonlySet<MaxType> = new Set(['ALN', 'UPPER', 'LOWER']);

export const isNumericType = (type: MaxType): boolean => NUMERIC_TYPES.has(type);
export const isTextType = (type: MaxType): boolean => TEXT_TYPES.has(type);
export const isDateType = (type: MaxType): boolean => type === 'DATE' || type === 'DATETIME';

/** ISO-8601 with an offset (`2005-01-30T12:34:01-05:00`, `...Z`) or a plain date. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export function parseIsoDate(text: string): Date | undefined {
  // Year 0000 is no year of the database's calendar (PGlite refuses it, PostgreSQL reads it as 1 BC).
  if (!ISO_DATE.test(text) || text.startsWith('0000')) return undefined;
  // A time without an offset is read as UTC, like a plain date, never in the server's own time zone.
  const zoned = /T|\s/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? `${text}Z` : text;
  const date = new Date(zoned);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Converts a JSON value (or a query literal) into the stored form of an attribute's type. */
export function toStored(attribute: AttributeDef, value: unknown): ConversionResult {
  if (value === null || value === undefined) return { ok: true, value: null };
  const type = attribute.type;
  if (isTextType(type)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      return { ok: false, expected: 'text' };
    }
    const text = String(value);
    // PostgreSQL text cannot hold NUL; refused here as bad input rather than by the database as a failure.
    if (text.includes('\u0000')) return { ok: false, expected: 'text' };
    return {
      ok: true,
      value: type === 'UPPER' ? text.toUpperCase() : type === 'LOWER' ? text.toLowerCase() : text,
    };
  }
  if (NUMERIC_TYPES.has(type)) {
    const number =
      typeof value === 'number'
        ? value
        : typeof value === 'string' && value.trim() !== ''
          ? Number(value)
          : NaN;
    if (!Number.isFinite(number)) return { ok: false, expected: 'number' };
    if ((type === 'INTEGER' || type === 'BIGINT') && !Number.isInteger(number))
      return { ok: false, expected: 'integer' };
    if (type === 'INTEGER' && Math.abs(number) > 2147483647) return { ok: false, expected: 'integer' };
    return { ok: true, value: number };
  }
  if (type === 'YORN') {
    if (typeof value === 'boolean') return { ok: true, value };
    if (value === 1 || value === '1' || value === 'true' || value === 'Y') return { ok: true, value: true };
    if (value === 0 || value === '0' || value === 'false' || value === 'N') return { ok: true, value: false };
    return { ok: false, expected: 'boolean' };
  }
  if (typeof value !== 'string') return { ok: false, expected: 'date' };
  const date = parseIsoDate(value);
  return date ? { ok: true, value: date } : { ok: false, expected: 'date' };
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** Dates leave as ISO-8601 with an explicit offset, in UTC: `2026-11-22T03:59:38+00:00`. */
export function formatDate(date: Date): string {
  return (
    `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}` +
    `T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}+00:00`
  );
}

export function toJson(value: StoredValue): JsonValue {
  return value instanceof Date ? formatDate(value) : value;
}
