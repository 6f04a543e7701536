import { plain, type CliStream } from './io.js';

export type OutputFormat = 'table' | 'json' | 'csv';

/** What a cell shows: scalars as they are, objects and arrays as compact JSON, one line. */
function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return plain(String(value)).replace(/[\n\t]/g, ' ');
}

const HIDDEN = /(_collectionref|^_rowstamp|^localref)$/;

/**
 * Columns of a set of rows: the order asked for, else the order of first appearance. Links and row stamps are
 * left out unless a row has nothing else (a query without `oslc.select`).
 */
export function columnsOf(rows: readonly Record<string, unknown>[], wanted?: readonly string[]): string[] {
  if (wanted && wanted.length > 0) return [...wanted];
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  const columns = [...seen].filter((key) => !HIDDEN.test(key));
  const withoutHref = columns.filter((key) => key !== 'href');
  return withoutHref.length > 0 ? withoutHref : columns;
}

/** An aligned text table; cells never carry control characters. */
export function renderTable(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  if (columns.length === 0) return rows.length === 0 ? '(none)\n' : '';
  const cells = rows.map((row) => columns.map((column) => cellText(row[column])));
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...cells.map((line) => line[index]!.length)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, index) => (index === values.length - 1 ? value : value.padEnd(widths[index]!)))
      .join('  ')
      .trimEnd();
  const out = [line(columns), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)];
  if (rows.length === 0) out.push('(none)');
  return `${out.join('\n')}\n`;
}

/** One CSV field (RFC 4180): quoted when it holds a separator, a quote or a line break. */
function csvField(value: unknown): string {
  const text =
    value === undefined || value === null
      ? ''
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  const safe = plain(text);
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\n`;
}

/** Key-value pairs as a two-column table (one record). */
export function renderRecord(record: Record<string, unknown>): string {
  return renderTable(
    Object.entries(record).map(([name, value]) => ({ name, value })),
    ['name', 'value'],
  );
}

/** Writes rows in the format asked for. */
export function writeRows(
  out: CliStream,
  format: OutputFormat,
  rows: readonly Record<string, unknown>[],
  wanted?: readonly string[],
): void {
  if (format === 'json') {
    out.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const columns = columnsOf(rows, wanted);
  if (format === 'csv') {
    out.write(csvLine(columns));
    for (const row of rows) out.write(csvLine(columns.map((column) => row[column])));
    return;
  }
  out.write(renderTable(rows, columns));
}

/** A JSON value, indented, on its own line. */
export function writeJson(out: CliStream, value: unknown): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}
