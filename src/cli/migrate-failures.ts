import type { EasClientError } from '../client/index.js';
import type { ExitCode } from './exit-codes.js';

/** A step the flow could not complete, with the exit code it ends with. */
export class StepFailure extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    readonly clientError?: EasClientError,
  ) {
    super(message);
  }
}

/** The flow was interrupted (SIGINT) while it waited. */
export class Interrupted extends Error {}

/** A pause that an interrupt ends at once (with `Interrupted`). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Interrupted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(new Interrupted());
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}
