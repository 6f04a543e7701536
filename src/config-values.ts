import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

/*
 * Settings whose values need more than the schema of src/config.ts: PEM certificates and private keys, given as
 * text or as the path of a file, each checked to be readable; and the error a setting is refused with.
 */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid configuration: ${variable} ${detail}`);
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of EAS_SAML_IDP_CERT: PEM text itself, or the path of a file holding it. */
export function readCertificates(value: string, variable = 'EAS_SAML_IDP_CERT'): string[] {
  const text = pemTextOf(value, variable, 'PEM certificate');
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) throw new ConfigError(variable, 'holds no PEM certificate');
  for (const certificate of certificates) {
    try {
      new X509Certificate(certificate);
    } catch {
      throw new ConfigError(variable, 'holds a certificate that cannot be read');
    }
  }
  return certificates;
}

/** PEM text given in the variable itself, or read from the file it names. */
function pemTextOf(value: string, variable: string, what: string): string {
  if (value.includes('-----BEGIN')) return value;
  try {
    return readFileSync(value, 'utf8');
  } catch {
    // The value may be key material pasted without its header: never echoed.
    throw new ConfigError(variable, `is neither a ${what} nor a readable file`);
  }
}

const PEM_PRIVATE_KEY =
  /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |EC )?PRIVATE KEY-----/g;

/** PEM private keys (EAS_SAML_SP_KEY, EAS_OIDC_CLIENT_KEY), each checked to be readable. */
export function readPrivateKeys(value: string, variable: string): string[] {
  const keys = pemTextOf(value, variable, 'PEM private key').match(PEM_PRIVATE_KEY) ?? [];
  if (keys.length === 0) throw new ConfigError(variable, 'holds no PEM private key');
  for (const key of keys) {
    try {
      createPrivateKey(key);
    } catch {
      throw new ConfigError(variable, 'holds a private key that cannot be read');
    }
  }
  return keys;
}
