import type { Credentials } from '../client/index.js';
import { CliError, EXIT } from './exit-codes.js';

/** The global connection options every command shares. */
export interface ConnectionOptions {
  url?: string;
  apikeyEnv?: string;
  auth?: string;
  apiRoot?: string;
  timeout?: string;
}

export const SCHEMES = ['apikey', 'maxauth', 'basic', 'form'] as const;

/**
 * Credentials come from the environment only, never from an argument (arguments show in process lists and shell
 * histories) and are never printed (docs/cli.md, "Credentials"):
 * `--apikey-env NAME` names the variable holding a key; otherwise `EAS_APIKEY`; otherwise `EAS_USER` and
 * `EAS_PASSWORD` with the login scheme of `--auth` / `EAS_AUTH` (maxauth by default).
 */
export function resolveCredentials(
  env: Readonly<Record<string, string | undefined>>,
  options: { apikeyEnv?: string | undefined; auth?: string | undefined },
  fallbackKeyVariable = 'EAS_APIKEY',
): Credentials {
  const scheme = options.auth ?? env.EAS_AUTH;
  if (scheme !== undefined && !(SCHEMES as readonly string[]).includes(scheme)) {
    throw new CliError(`--auth must be one of ${SCHEMES.join(', ')}.`, EXIT.usage);
  }
  if (options.apikeyEnv !== undefined) {
    const apikey = env[options.apikeyEnv];
    if (!apikey) {
      throw new CliError(
        `The environment variable ${options.apikeyEnv} (--apikey-env) is not set.`,
        EXIT.usage,
      );
    }
    return { scheme: 'apikey', apikey };
  }
  if (scheme === undefined || scheme === 'apikey') {
    const apikey =
      env[fallbackKeyVariable] || (fallbackKeyVariable !== 'EAS_APIKEY' ? env.EAS_APIKEY : undefined);
    if (apikey) return { scheme: 'apikey', apikey };
    if (scheme === 'apikey')
      throw new CliError(`No API key: set ${fallbackKeyVariable} or use --apikey-env.`, EXIT.usage);
  }
  const user = env.EAS_USER;
  const password = env.EAS_PASSWORD;
  if (user && password) {
    return { scheme: (scheme ?? 'maxauth') as 'maxauth' | 'basic' | 'form', user, password };
  }
  throw new CliError(
    `No credentials: set ${fallbackKeyVariable} (or name a variable with --apikey-env), or EAS_USER and EAS_PASSWORD.`,
    EXIT.usage,
  );
}

/** The address of the server: `--url`, else `EAS_URL`. */
export function resolveUrl(
  env: Readonly<Record<string, string | undefined>>,
  url: string | undefined,
): string {
  const value = url ?? env.EAS_URL;
  if (!value) throw new CliError('No server address: use --url or set EAS_URL.', EXIT.usage);
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(parsed.protocol);
    if (parsed.username || parsed.password) {
      throw new CliError('Put no credentials in the address; use the environment (docs/cli.md).', EXIT.usage);
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    // The value is not repeated: a malformed address may still hold a secret.
    throw new CliError('The server address (--url or EAS_URL) is not an http(s) address.', EXIT.usage);
  }
  return value;
}
