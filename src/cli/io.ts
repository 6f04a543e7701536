import { createInterface } from 'node:readline/promises';

/** One output stream of the CLI: where text goes, and whether it is a terminal. */
export interface CliStream {
  write(text: string): void;
  readonly isTTY: boolean;
  /** Columns of the terminal (80 when unknown). */
  readonly columns: number;
}

/**
 * Everything the CLI touches outside itself, so that tests run it in-process: streams, environment, the question
 * asked before a deployment, and the interrupt signal.
 */
export interface CliIo {
  stdout: CliStream;
  stderr: CliStream;
  env: Readonly<Record<string, string | undefined>>;
  /** Asks a yes/no question on the terminal; false when there is none. */
  confirm(question: string): Promise<boolean>;
  /** Calls `listener` on each SIGINT until the returned function is called (then SIGINT acts as usual again). */
  onInterrupt(listener: () => void): () => void;
}

function stream(target: NodeJS.WriteStream): CliStream {
  // A reader that stops early (`eas query --all | head`) closes the pipe: the rest of the output is dropped, and the
  // command still runs to its end, so that a deployment still turns admin mode off (docs/cli.md).
  let closed = false;
  target.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    closed = true;
  });
  return {
    write: (text) => {
      if (!closed) target.write(text);
    },
    get isTTY() {
      return target.isTTY === true;
    },
    get columns() {
      return target.columns ?? 80;
    },
  };
}

/** The process's own streams, environment and signals. */
export function processIo(): CliIo {
  return {
    stdout: stream(process.stdout),
    stderr: stream(process.stderr),
    env: process.env,
    async confirm(question) {
      if (!process.stdin.isTTY || !process.stderr.isTTY) return false;
      const readline = createInterface({ input: process.stdin, output: process.stderr });
      try {
        const answer = await readline.question(`${question} [y/N] `);
        return /^y(es)?$/i.test(answer.trim());
      } finally {
        readline.close();
      }
    },
    onInterrupt(listener) {
      process.on('SIGINT', listener);
      return () => void process.off('SIGINT', listener);
    },
  };
}

/** Control characters other than line feed and tab (terminal escapes, carriage returns) made harmless. */
export function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, ' ');
}
