import type { PairResult } from './pair.js';

/** The pairs' table as the README shows it (bench/README.md, "Reading the table"). */
export function formatTable(results: readonly PairResult[]): string {
  const number = (value: number | undefined, digits: number) =>
    value === undefined ? '-' : value.toFixed(digits);
  const header = [
    'section',
    'pair',
    'conns',
    'service',
    'req/s',
    'p50 ms',
    'p99 ms',
    'cpu us',
    'wakeups',
    'baseline',
    'req/s',
    'p50 ms',
    'p99 ms',
    'cpu us',
    'wakeups',
    'ratio',
    'rounds',
    'target',
    'result',
  ];
  const rows = results.map((result) => [
    result.section,
    result.pair,
    result.connections === undefined ? '-' : String(result.connections),
    result.subject?.label ?? '-',
    number(result.subject?.requestsPerSecond, 0),
    number(result.subject?.latencyMs.p50, 2),
    number(result.subject?.latencyMs.p99, 2),
    number(result.subject?.serverCpuMicrosecondsPerRequest, 0),
    number(result.subject?.clientWakeupsPerRequest, 2),
    result.baseline?.label ?? '-',
    number(result.baseline?.requestsPerSecond, 0),
    number(result.baseline?.latencyMs.p50, 2),
    number(result.baseline?.latencyMs.p99, 2),
    number(result.baseline?.serverCpuMicrosecondsPerRequest, 0),
    number(result.baseline?.clientWakeupsPerRequest, 2),
    number(result.ratio, 2),
    result.roundRatios === undefined
      ? '-'
      : `${Math.min(...result.roundRatios).toFixed(2)}-${Math.max(...result.roundRatios).toFixed(2)}`,
    Number.isNaN(result.target) ? '-' : `>= ${result.target.toFixed(2)}`,
    result.verdict,
  ]);
  const textColumns = new Set([0, 1, 3, 9, 18]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        textColumns.has(column) ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  const errors = results
    .filter((result) => result.error !== undefined)
    .map((result) => `${result.section} / ${result.pair}: ${result.error}`);
  return [line(header), rule, ...rows.map(line), ...(errors.length > 0 ? ['', ...errors] : [])].join('\n');
}
