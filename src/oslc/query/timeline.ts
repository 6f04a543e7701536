import { errors } from '../../errors.js';
import { parseIsoDate } from '../values.js';

/**
 * Parse stage of time-line queries (docs/compatibility.md, "Queries"): `tlrange=-3M&tlattribute=reportdate` keeps the members
 * whose report date lies in the three months before now; `+3M` the three months after, `+-3Y` three years either
 * side; `tlattribute=reportdate=<iso date>` measures from that date instead of now.
 */
export type TimelineUnit = 'D' | 'W' | 'M' | 'Y';

export interface TimelineRequest {
  /** Attribute name, lower case; the plan stage checks that it is a date. */
  attribute: string;
  amount: number;
  unit: TimelineUnit;
  /** Whether the range reaches before and after the anchor. */
  back: boolean;
  forward: boolean;
  /** The date the range is measured from; absent: the time of the request. */
  anchor?: Date;
}

/**
 * The sign, then the amount and unit. A `+` sent unencoded arrives as a space (URL decoding), so a leading space
 * is read as the `+` it was.
 */
const RANGE = /^(\+-|-\+|\+|-)(\d{1,5})([DWMY])$/i;

export function parseTimeline(range: string, attribute: string | undefined): TimelineRequest {
  const match = RANGE.exec(range.replace(/^ /, '+').trim());
  if (!match) {
    throw errors.badRequest(
      `The time line range ${range} is not valid. Use a sign (-, + or +-), a number and a unit (D, W, M or Y), for example -3M.`,
      { attrName: 'tlrange', attrValue: range },
    );
  }
  if (attribute === undefined || attribute.trim() === '') {
    throw errors.badRequest('A time line range needs the date attribute it applies to, in tlattribute.', {
      attrName: 'tlattribute',
    });
  }
  const [, sign, amount, unit] = match as unknown as [string, string, string, string];
  const equals = attribute.indexOf('=');
  const name = (equals === -1 ? attribute : attribute.slice(0, equals)).trim().toLowerCase();
  const request: TimelineRequest = {
    attribute: name,
    amount: Number(amount),
    unit: unit.toUpperCase() as TimelineUnit,
    back: sign.includes('-'),
    forward: sign.includes('+'),
  };
  if (equals === -1) return request;
  // `+05:00` sent unencoded arrives as ` 05:00`.
  const text = attribute
    .slice(equals + 1)
    .trim()
    .replace(/ (\d{2}:?\d{2})$/, '+$1');
  const anchor = parseIsoDate(text);
  if (!anchor) {
    throw errors.badRequest(`The time line date ${text} is not an ISO-8601 date.`, {
      attrName: 'tlattribute',
      attrValue: attribute,
    });
  }
  return { ...request, anchor };
}

export interface TimelineBounds {
  from: Date;
  to: Date;
}

const DAY = 86_400_000;

const utc = (year: number, month: number, day: number): number =>
  new Date(0).setUTCFullYear(year, month, day);
/** Years 1 to 9999 with a day's margin, so that the date stays inside that range in any time zone. */
const EARLIEST = utc(1, 0, 2);
const LATEST = utc(9999, 11, 30);

/** Whether PostgreSQL (and an ISO-8601 text of four-digit years) can hold the date. */
export function isStorableDate(date: Date): boolean {
  const time = date.getTime();
  return time >= EARLIEST && time <= LATEST;
}

/** The inclusive range of a time line around its anchor (or `now`), in calendar months and years. */
export function timelineBounds(request: TimelineRequest, now: Date): TimelineBounds {
  const anchor = request.anchor ?? now;
  const shift = (direction: 1 | -1): Date => {
    const amount = request.amount * direction;
    switch (request.unit) {
      case 'D':
        return new Date(anchor.getTime() + amount * DAY);
      case 'W':
        return new Date(anchor.getTime() + amount * 7 * DAY);
      case 'M':
        return addMonths(anchor, amount);
      case 'Y':
        return addMonths(anchor, amount * 12);
    }
  };
  const bounds = { from: request.back ? shift(-1) : anchor, to: request.forward ? shift(1) : anchor };
  for (const date of [bounds.from, bounds.to]) {
    if (!isStorableDate(date)) {
      throw errors.badRequest('The time line range reaches beyond the years 1 to 9999.', {
        attrName: 'tlrange',
        attrValue: `${request.back ? '-' : ''}${request.forward ? '+' : ''}${request.amount}${request.unit}`,
      });
    }
  }
  return bounds;
}

/** Calendar months; a day the target month lacks becomes its last day (January 31 − 2 months = November 30). */
function addMonths(date: Date, months: number): Date {
  const result = new Date(date.getTime());
  const day = result.getUTCDate();
  result.setUTCDate(1);
  result.setUTCMonth(result.getUTCMonth() + months);
  // Day 0 of the next month is the last day of this one (setUTCFullYear, unlike Date.UTC, keeps years below 100).
  const probe = new Date(0);
  probe.setUTCFullYear(result.getUTCFullYear(), result.getUTCMonth() + 1, 0);
  const lastDay = probe.getUTCDate();
  result.setUTCDate(Math.min(day, lastDay));
  return result;
}
