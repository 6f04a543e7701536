import type * as openid from 'openid-client';
import { LOOPBACK_HOSTS, type OidcConfig } from '../../config.js';
import { errors } from '../../errors.js';
import type { ProviderSession } from '../federated/provider-sessions.js';
import { SealedState } from '../federated/sealed-state.js';
import type { FederatedIdentity } from '../federated/service.js';
import { clientKeyOf, type ClientKey } from './client-key.js';
import { providerKeys, verifyLogoutToken, type LogoutSubject, type ProviderKeys } from './logout-token.js';

type OpenidClient = typeof openid;

/** Loaded at the first sign-in: a server not in oidc mode never compiles the library (docs/startup.md). */
function openidClient(): Promise<OpenidClient> {
  return import('openid-client');
}

/** How far in the future an ID token's `iat` may be (the provider's clock ahead of this one). */
export const ID_TOKEN_CLOCK_SKEW_SECONDS = 60;

/** How long a browser may take at the provider between leaving and coming back. */
export const SIGN_IN_STATE_SECONDS = 600;

/** Failures of the provider itself (an error page, a non-JSON answer), not of what the browser brought back. */
const PROVIDER_FAULTS: ReadonlySet<string> = new Set([
  'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'OAUTH_RESPONSE_IS_NOT_JSON',
]);

/** What travels, sealed, in the state cookie between the redirect to the provider and its callback. */
interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

export interface OidcRelyingPartyOptions {
  settings: OidcConfig;
  /** Key the pending sign-in is sealed with: the same in every process (derived from the master key). */
  stateKey: Buffer;
  logWarning: (error: unknown, message: string) => void;
}

/** The end of a callback: who signed in, and where the browser goes next. */
export interface CompletedSignIn {
  identity: FederatedIdentity;
  returnTo: string;
  /** The provider's subject and session, which its back-channel logout names. */
  provider: ProviderSession | undefined;
}

/**
 * The OpenID Connect relying party (docs/federated-login.md): authorization code flow with PKCE through
 * `openid-client`, the provider described by its discovery document. The callback checks state, then the library
 * checks the ID token: signature against the provider's keys, issuer, audience, nonce, expiry and issue time.
 */
export class OidcRelyingParty {
  private discovered: Promise<openid.Configuration> | undefined;
  private readonly pending: SealedState<PendingSignIn>;
  private clientKey: Promise<ClientKey> | undefined;
  private keys: Promise<ProviderKeys> | undefined;

  constructor(private readonly options: OidcRelyingPartyOptions) {
    this.pending = new SealedState(options.stateKey, 'oidc sign-in');
  }

  get providerName(): string {
    return this.options.settings.providerName;
  }

  /** The provider's URL to send the browser to, and the sealed state to keep in its cookie meanwhile. */
  async begin(returnTo: string): Promise<{ authorizationUrl: string; sealedState: string }> {
    const configuration = await this.configuration();
    const client = await openidClient();
    const verifier = client.randomPKCECodeVerifier();
    const pending: PendingSignIn = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier,
      returnTo,
    };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.options.settings.redirectUrl,
      scope: this.options.settings.scopes,
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { authorizationUrl: url.href, sealedState: this.pending.seal(pending, SIGN_IN_STATE_SECONDS) };
  }

  /**
   * Checks the callback (`query`: its raw query string) against the sealed state of the browser's cookie, redeems
   * the code and checks the ID token. EAS0190E when anything is wrong; EAS0192E when the provider cannot be asked.
   */
  async complete(query: string, sealedState: string | undefined): Promise<CompletedSignIn> {
    const pending = this.pending.open(sealedState);
    if (!pending)
      throw errors.federatedSignInRefused('no sign-in is in progress in this browser, or it expired');
    const configuration = await this.configuration();
    const client = await openidClient();
    const callbackUrl = new URL(this.options.settings.redirectUrl);
    callbackUrl.search = query;
    let tokens: Awaited<ReturnType<typeof openid.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        pkceCodeVerifier: pending.verifier,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.refusal(client, error);
    }
    const claims = tokens.claims();
    if (!claims) throw errors.federatedSignInRefused('the provider returned no ID token');
    // The library checks that `iat` is not too old, not that it has come yet: a token dated in the future was made
    // by a clock that cannot be trusted, or made to last (docs/federated-login.md, "What the service checks (OIDC)").
    if (claims.iat > Date.now() / 1000 + ID_TOKEN_CLOCK_SKEW_SECONDS) {
      throw errors.federatedSignInRefused('the ID token is issued in the future ("iat")');
    }
    const name = claims[this.options.settings.userClaim];
    if (typeof name !== 'string' || name === '') {
      throw errors.federatedSignInRefused(`the ID token has no ${this.options.settings.userClaim} claim`);
    }
    return {
      identity: {
        scheme: 'OIDC',
        name,
        displayName: typeof claims.name === 'string' ? claims.name : undefined,
        email: typeof claims.email === 'string' ? claims.email : undefined,
      },
      returnTo: pending.returnTo,
      provider:
        typeof claims.sub === 'string'
          ? { subject: claims.sub, providerSession: typeof claims.sid === 'string' ? claims.sid : undefined }
          : undefined,
    };
  }

  /** The public key of `private_key_jwt` (its JWKS), or undefined when the client authenticates otherwise. */
  async publicKeys(): Promise<{ keys: object[] } | undefined> {
    const key = this.signingKey();
    return key && { keys: [(await key).publicJwk] };
  }

  private signingKey(): Promise<ClientKey> | undefined {
    const pem = this.options.settings.clientKey;
    if (pem === undefined) return undefined;
    this.clientKey ??= clientKeyOf(pem);
    return this.clientKey;
  }

  /** A back-channel logout token, checked against the provider's keys: whose sessions end (logout-token.ts). */
  async logoutSubject(token: string): Promise<LogoutSubject> {
    const configuration = await this.configuration();
    const metadata = configuration.serverMetadata();
    if (metadata.jwks_uri === undefined) throw errors.identityProviderUnavailable();
    this.keys ??= providerKeys(metadata.jwks_uri);
    return verifyLogoutToken(token, await this.keys, {
      issuer: metadata.issuer,
      clientId: this.options.settings.clientId,
    });
  }

  /** RP-initiated logout at the provider, when it offers it: where to send the browser after the local logout. */
  async endSessionUrl(fallback: string): Promise<string | undefined> {
    const configuration = await this.configuration();
    if (configuration.serverMetadata().end_session_endpoint === undefined) return undefined;
    const client = await openidClient();
    return client.buildEndSessionUrl(configuration, {
      client_id: this.options.settings.clientId,
      post_logout_redirect_uri: this.options.settings.postLogoutRedirectUrl ?? fallback,
    }).href;
  }

  /**
   * The provider's configuration from its discovery document, fetched once per process; a failed discovery is
   * tried again on the next sign-in.
   */
  private configuration(): Promise<openid.Configuration> {
    this.discovered ??= this.discover().catch((error: unknown) => {
      this.discovered = undefined;
      this.options.logWarning(error, 'OpenID provider discovery failed');
      throw errors.identityProviderUnavailable();
    });
    return this.discovered;
  }

  private async discover(): Promise<openid.Configuration> {
    const { issuer, clientId, clientSecret } = this.options.settings;
    const issuerUrl = new URL(issuer);
    // Plain http only to a provider on the loopback address (configuration refuses any other).
    const insecure = issuerUrl.protocol === 'http:' && LOOPBACK_HOSTS.has(issuerUrl.hostname);
    const client = await openidClient();
    const key = await this.signingKey();
    const authentication = key
      ? client.PrivateKeyJwt({ key: key.key, kid: key.kid })
      : clientSecret === undefined
        ? client.None()
        : client.ClientSecretBasic(clientSecret);
    const configuration = await client.discovery(issuerUrl, clientId, undefined, authentication, {
      ...(insecure && { execute: [client.allowInsecureRequests] }),
      timeout: 10,
    });
    // The ID token's signature is checked against the provider's published keys, not only trusted because it came
    // over the token endpoint's connection.
    client.enableNonRepudiationChecks(configuration);
    return configuration;
  }

  /** A failed code redemption: the provider unreachable is 502, anything the browser or the tokens did is 401. */
  private refusal(client: OpenidClient, error: unknown): Error {
    this.options.logWarning(error, 'OpenID sign-in refused');
    if (error instanceof client.AuthorizationResponseError) {
      return errors.federatedSignInRefused(`the provider answered ${error.error}`);
    }
    if (error instanceof client.ResponseBodyError) {
      return errors.federatedSignInRefused(`the provider refused the code (${error.error})`);
    }
    if (error instanceof client.ClientError && !PROVIDER_FAULTS.has(error.code ?? '')) {
      // The library's message is generic ("unexpected JWT claim value encountered"); its cause names the check.
      const detail = error.cause instanceof Error ? error.cause.message : error.message;
      return errors.federatedSignInRefused(
        `the ID token or the provider's answer is not valid (${detail.slice(0, 200)})`,
      );
    }
    return errors.identityProviderUnavailable();
  }
}
