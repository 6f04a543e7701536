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
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-](\d{2}):?(\d{2}))?)?$/;

const utcYear = (year: number, month: number, day: number): number =>
  new Date(0).setUTCFullYear(year, month, day);
/** The years 0001 to 9999, to the millisecond: what ISO-8601 texts of four-digit years and both databases hold. */
const EARLIEST_DATE = utcYear(1, 0, 1);
const LATEST_DATE = utcYear(10000, 0, 1) - 1;

/** Whether a date lies in the years 0001 to 9999 (UTC), the range every date attribute accepts and returns. */
export function isStorableDate(date: Date): boolean {
  const time = date.getTime();
  return time >= EARLIEST_DATE && time <= LATEST_DATE;
}

/** Days of a month (1-12) of the proleptic Gregorian calendar, leap years included. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * A date as clients write it, or undefined when it is no date: every field is checked against the calendar
 * (`2020-02-30` is refused rather than rolled over into March), and the instant must fall in the years 0001 to 9999.
 */
export function parseIsoDate(text: string): Date | undefined {
  const match = ISO_DATE.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, zone, zoneHours, zoneMinutes] = match;
  const y = Number(year);
  const m = Number(month);
  if (m < 1 || m > 12 || Number(day) < 1 || Number(day) > daysInMonth(y, m)) return undefined;
  if (Number(hour ?? 0) > 23 || Number(minute ?? 0) > 59 || Number(second ?? 0) > 59) return undefined;
  if (zone && zone !== 'Z' && (Number(zoneHours) > 18 || Number(zoneMinutes) > 59)) return undefined;
  // A time without an offset is read as UTC, like a plain date, never in the server's own time zone.
  const zoned = hour !== undefined && !zone ? `${text}Z` : text;
  const date = new Date(zoned.replace(' ', 'T'));
  return Number.isNaN(date.getTime()) || !isStorableDate(date) ? undefined : date;
}

/** Converts a JSON value (or a query literal) into the stored form of an attribute's type. */
/** An INTEGER attribute holds PostgreSQL's `integer`, both ends of its range included. */
export const INTEGER_RANGE = [-2147483648, 2147483647] as const;

/** A surrogate code unit not paired with its other half (with the `u` flag, a pair is one code point). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

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
    // A lone surrogate (JSON `"\ud800X"`) has no UTF-8 form: the database would store U+FFFD in its place, silently,
    // and two such values would then be equal. Refused, naming the attribute (docs/compatibility.md, "Values").
    if (LONE_SURROGATE.test(text)) return { ok: false, expected: 'text' };
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
    if (type === 'INTEGER' && (number < INTEGER_RANGE[0] || number > INTEGER_RANGE[1]))
      return { ok: false, expected: 'integer' };
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

/** Dates leave as ISO-8601 with an explicit offset, in UTC: `2026-11-22T03:59:38+00:00`; years of four digits. */
export function formatDate(date: Date): string {
  return (
    `${String(date.getUTCFullYear()).padStart(4, '0')}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}` +
    `T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}+00:00`
  );
}

export function toJson(value: StoredValue): JsonValue {
  return value instanceof Date ? formatDate(value) : value;
}
