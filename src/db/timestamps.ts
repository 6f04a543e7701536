/**
 * Timestamps as both engines send them in text (`0999-06-01 00:00:00+00`, `2026-01-02 03:04:05.678+00`,
 * `0044-03-15 12:00:00+00 BC`). Read here rather than by each driver's own parser: PGlite's reads years below 100
 * as 19xx/20xx, and a date read back must be the date written, for the years 0001 to 9999 (docs/compatibility.md).
 */
const TIMESTAMP =
  /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?( BC)?$/;

/** A `timestamptz` (or `timestamp`, read as UTC) value; `infinity` and unreadable text become an invalid Date. */
export function parseTimestamp(text: string): Date {
  const match = TIMESTAMP.exec(text);
  if (!match) return new Date(Number.NaN);
  const [
    ,
    year,
    month,
    day,
    hour,
    minute,
    second,
    fraction,
    sign,
    offsetHours,
    offsetMinutes,
    offsetSeconds,
    bc,
  ] = match;
  const date = new Date(0);
  // Year 1 BC is year 0 of the astronomical count that Date uses.
  const fullYear = bc ? 1 - Number(year) : Number(year);
  date.setUTCFullYear(fullYear, Number(month) - 1, Number(day));
  date.setUTCHours(
    Number(hour),
    Number(minute),
    Number(second),
    fraction ? Math.floor(Number(fraction) * 1000) : 0,
  );
  if (sign) {
    const offset =
      (Number(offsetHours) * 3600 + Number(offsetMinutes ?? 0) * 60 + Number(offsetSeconds ?? 0)) * 1000;
    date.setTime(date.getTime() - (sign === '+' ? offset : -offset));
  }
  return date;
}

export const TIMESTAMP_OID = 1114;
export const TIMESTAMPTZ_OID = 1184;

/**
 * A `date` value (`2026-03-04`): midnight UTC of that day, as DATE attributes are written and returned
 * (docs/dbconfig.md, "Types"), never midnight of the server's own time zone.
 */
export function parseDate(text: string): Date {
  return parseTimestamp(
    `${text.endsWith(' BC') ? text.slice(0, -3) : text} 00:00:00+00${text.endsWith(' BC') ? ' BC' : ''}`,
  );
}

export const DATE_OID = 1082;
