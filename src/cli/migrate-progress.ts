import { plain, type CliStream } from './io.js';

/** What a progress report counts: an upload its bytes sent, a deploy its records done, a backup its bytes read. */
export type ProgressLabel = 'uploading' | 'deploying' | 'backing up' | 'restoring';

const UNIT: Record<ProgressLabel, string> = {
  uploading: 'bytes',
  deploying: 'records',
  'backing up': 'bytes',
  restoring: 'bytes',
};

/** `40,000 of 100,000 records, 5,120 records/s`. */
export function progressText(label: ProgressLabel, done: number, total: number, rate: number): string {
  const count = (value: number) => Math.round(value).toLocaleString('en-US');
  const unit = UNIT[label];
  return `${count(done)} of ${count(total)} ${unit}, ${count(rate)} ${unit}/s`;
}

const BAR_WIDTH = 24;

/** `[######------] text`, redrawn in place on a terminal line. */
export function drawBar(out: CliStream, text: string, fraction: number): void {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * BAR_WIDTH);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
  const line = `${bar} ${text}`.slice(0, Math.max(20, out.columns - 1));
  out.write(`\r\u001b[2K${plain(line)}`);
}

/** Progress as plain lines for pipes and logs: the first report, then one every 10 s, and the last (all done). */
export class ProgressLines {
  private last = new Map<ProgressLabel, number>();
  constructor(private readonly out: CliStream) {}
  report(label: ProgressLabel, done: number, total: number, rate: number): void {
    const now = Date.now();
    const last = this.last.get(label);
    if (last !== undefined && now - last < 10_000 && done < total) return;
    this.last.set(label, now);
    this.out.write(`${label}: ${progressText(label, done, total, rate)}\n`);
  }
}

/**
 * An `onSent` for an upload that shows its bytes sent, total and rate on `out`: a bar on a terminal (the line is
 * cleared again once all is sent), plain lines otherwise, nothing with `quiet`.
 */
export function uploadProgress(
  out: CliStream,
  quiet: boolean,
): ((sent: number, total: number) => void) | undefined {
  return quiet ? undefined : transferProgress(out, 'uploading');
}

/** Bytes moved of a total, shown on `out` as `uploadProgress` shows an upload's. */
export function transferProgress(
  out: CliStream,
  label: ProgressLabel,
): (done: number, total: number) => void {
  const started = Date.now();
  const lines = out.isTTY ? undefined : new ProgressLines(out);
  return (done, total) => {
    const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
    if (lines) return lines.report(label, done, total, rate);
    drawBar(out, `${label} ${progressText(label, done, total, rate)}`, total === 0 ? 1 : done / total);
    if (done >= total) out.write('\r\u001b[2K');
  };
}
