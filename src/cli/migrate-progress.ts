import { plain, type CliStream } from './io.js';

/** What a progress report counts: an upload its bytes sent, a deploy its records done. */
export type ProgressLabel = 'uploading' | 'deploying';

const UNIT: Record<ProgressLabel, string> = { uploading: 'bytes', deploying: 'records' };

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
  if (quiet) return undefined;
  const started = Date.now();
  const lines = out.isTTY ? undefined : new ProgressLines(out);
  return (sent, total) => {
    const rate = sent / Math.max(0.001, (Date.now() - started) / 1000);
    if (lines) return lines.report('uploading', sent, total, rate);
    drawBar(out, `uploading ${progressText('uploading', sent, total, rate)}`, total === 0 ? 1 : sent / total);
    if (sent >= total) out.write('\r\u001b[2K');
  };
}
