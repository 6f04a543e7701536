import { InvalidArgumentError } from 'commander';
import { EasClient } from '../client/index.js';
import { resolveCredentials, resolveUrl, type ConnectionOptions } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

/** The options every command accepts (declared on the root command). */
export interface GlobalOptions extends ConnectionOptions {
  json?: boolean;
}

export function integer(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('Not an integer.');
  return Number(value);
}

/** A number of minutes: fractions allowed (`0.5`). */
export function minutes(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value.trim())) throw new InvalidArgumentError('Not a number of minutes.');
  return Number(value);
}

/** A client for the global options of the command being run. */
export function clientFor(io: CliIo, options: GlobalOptions, url?: string, apikeyEnv?: string): EasClient {
  const apiRoot = options.apiRoot ?? 'oslc';
  if (apiRoot !== 'oslc' && apiRoot !== 'api')
    throw new CliError('--api-root must be oslc or api.', EXIT.usage);
  return new EasClient({
    baseUrl: resolveUrl(io.env, url ?? options.url),
    credentials: resolveCredentials(io.env, {
      apikeyEnv: apikeyEnv ?? options.apikeyEnv,
      auth: options.auth,
    }),
    apiRoot,
    // Per-request maxauth/BASIC: a command opens no session, so none is left behind however it ends, and admin
    // mode's session limit never refuses the next command (docs/cli.md, "Credentials").
    perRequestCredentials: true,
    ...(options.timeout !== undefined && { timeoutMs: integer(options.timeout) * 1000 }),
  });
}
