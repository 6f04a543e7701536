import { EasClientError } from '../client/index.js';

/** Exit codes of `eas`, one per kind of failure (docs/cli.md, "Exit codes"). */
export const EXIT = {
  ok: 0,
  /** Anything not named below (a fault of the CLI itself). */
  failure: 1,
  /** Wrong arguments, missing credentials or address. */
  usage: 2,
  /** The server refused the credentials (401, BMXAA7901E, BMXAA9549E, BMXAA0021E). */
  authentication: 3,
  /** The server refused the request (any other error object). */
  refused: 4,
  /** No answer from the server, after the retries where the command retries. */
  connection: 5,
  /** `eas migrate`: the deployment failed (the package data failed the target's validation). */
  deployFailed: 6,
  /** `eas migrate`: the deployment was not confirmed. */
  notConfirmed: 7,
  /** `eas migrate`: admin mode did not reach state 1 within `--adminmode-timeout`. */
  adminModeTimeout: 8,
  /** `eas migrate`: admin mode was turned on and could NOT be turned off again; act at once. */
  adminModeStillOn: 9,
  /** Interrupted (Ctrl-C, SIGINT); admin mode was turned off first when the command had turned it on. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

const AUTHENTICATION_CODES = new Set(['BMXAA7901E', 'BMXAA9549E', 'BMXAA0021E', 'EAS0041E']);

/** The exit code of an SDK failure. */
export function exitCodeOf(error: unknown): ExitCode {
  if (!(error instanceof EasClientError)) return EXIT.failure;
  if (error.kind === 'connection') return EXIT.connection;
  if (
    error.status === 401 ||
    (error.reasonCode !== undefined && AUTHENTICATION_CODES.has(error.reasonCode))
  ) {
    return EXIT.authentication;
  }
  return error.kind === 'server' ? EXIT.refused : EXIT.failure;
}

/** A failure the CLI itself raises, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

/** Ends the command with an exit code after its output was written (nothing more is printed). */
export class CliExit extends CliError {
  constructor(exitCode: (typeof EXIT)[keyof typeof EXIT]) {
    super('', exitCode);
  }
}
