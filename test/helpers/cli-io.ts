import type { CliIo, CliStream } from '../../src/cli/io.js';

/** A CliIo whose output is collected, for running `eas` in-process in tests. */
export interface CapturedIo {
  io: CliIo;
  stdout(): string;
  stderr(): string;
  /** The questions `confirm` was asked, in order. */
  questions(): string[];
}

function collector(isTTY: boolean): CliStream & { text: string } {
  return {
    text: '',
    write(chunk: string) {
      this.text += chunk;
    },
    isTTY,
    columns: 100,
  };
}

export function captureIo(
  env: Record<string, string | undefined>,
  options: { tty?: boolean; answer?: boolean } = {},
): CapturedIo {
  const stdout = collector(options.tty === true);
  const stderr = collector(options.tty === true);
  const questions: string[] = [];
  return {
    io: {
      stdout,
      stderr,
      env,
      confirm: async (question: string) => {
        questions.push(question);
        return options.answer === true;
      },
      onInterrupt: () => () => undefined,
    },
    stdout: () => stdout.text,
    stderr: () => stderr.text,
    questions: () => [...questions],
  };
}
