// The settings of @node-saml/node-saml's service provider, by use (docs/federated-login.md, "SAML"). One library
// instance cannot serve every case: the decryption key is one per instance (a rollover has two), an encrypted
// assertion must be signed itself, and logout messages always use the HTTP-Redirect binding (deflated) whatever
// binding the authentication request uses.
import type { CacheProvider, SamlConfig as LibraryConfig } from '@node-saml/node-saml';
import type { SamlConfig } from '../../config.js';

/** How long an authentication request may be answered: the time a person may spend at the identity provider. */
export const REQUEST_VALIDITY_MS = 60 * 60 * 1000;

/** What an instance is for. */
export interface LibraryUse {
  /** Index of the key that decrypts (EAS_SAML_SP_KEY); 0 unless a rollover's older key is tried. */
  decryptionKey: number;
  /** Responses with an encrypted assertion: the decrypted assertion must carry its own signature. */
  encrypted: boolean;
  /** Logout messages (HTTP-Redirect binding). */
  logout: boolean;
}

export function libraryOptions(
  config: SamlConfig,
  use: LibraryUse,
  requests: CacheProvider,
  ValidateInResponseTo: { ifPresent: LibraryConfig['validateInResponseTo'] },
): LibraryConfig {
  const keys = config.spKeys;
  const deflated = use.logout || config.requestBinding === 'redirect';
  return {
    entryPoint: config.idpSsoUrl,
    idpCert: config.idpCertificates,
    ...(config.idpEntityId !== undefined && { idpIssuer: config.idpEntityId }),
    issuer: config.spEntityId,
    audience: config.spEntityId,
    callbackUrl: config.acsUrl,
    // Either the response or the assertion must carry a valid signature by one of the configured certificates (the
    // library refuses a response with neither); an encrypted assertion must be signed inside (SAML core 6.2).
    wantAssertionsSigned: use.encrypted,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: config.clockSkewSeconds * 1000,
    validateInResponseTo: ValidateInResponseTo.ifPresent,
    requestIdExpirationPeriodMs: REQUEST_VALIDITY_MS,
    cacheProvider: requests,
    identifierFormat: null,
    // The provider chooses how the person authenticates.
    disableRequestedAuthnContext: true,
    authnRequestBinding: config.requestBinding === 'post' ? 'HTTP-POST' : 'HTTP-Redirect',
    // The HTTP-POST binding carries the request base64-encoded only; DEFLATE belongs to HTTP-Redirect.
    skipRequestCompression: !deflated,
    // Logout requests go to the provider's single logout service; without one, to its sign-on URL (many providers
    // serve both there).
    logoutUrl: config.idpSloUrl ?? config.idpSsoUrl,
    logoutCallbackUrl: config.sloUrl,
    ...(keys !== undefined && {
      // Requests (authentication and logout) and logout responses are signed with the first key.
      privateKey: keys.privateKeys[0]!,
      publicCert: keys.certificates[0]!,
      signatureAlgorithm: 'sha256',
      digestAlgorithm: 'sha256',
      decryptionPvk: keys.privateKeys[use.decryptionKey] ?? keys.privateKeys[0]!,
    }),
  };
}
