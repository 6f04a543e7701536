// A real OpenID provider (`oidc-provider`) on the loopback address for the federated-login tests, with a login page of
// its own (no external assets) and a hook that lets a test answer the token request with an ID token it crafted.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/** The password every test account signs in with at the provider. */
export const PROVIDER_PASSWORD = 'provider-pw';
const KEY_ID = 'test-signing-key';

export interface ProviderClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
  /** The client's public keys: it authenticates by `private_key_jwt` instead of its secret. */
  jwks?: { keys: JWK[] };
  /**
   * Where the provider posts back-channel logout tokens; unset: a capture the test reads with `logoutToken`.
   */
  backchannelLogoutUri?: string;
}

/** A token request the test answers itself: the crafted response body. */
export type TokenAnswer = () => Promise<Record<string, unknown>>;

export interface TestProvider {
  issuer: string;
  /** The key the provider signs ID tokens with (also published in its JWKS). */
  signingKey: CryptoKey;
  /** When set, the next token requests are answered with this instead of by the provider. */
  answerTokenRequest: TokenAnswer | undefined;
  /** An ID token as the provider would sign it; `changes` overrides claims, `key` signs it with another key. */
  craftIdToken(
    claims: JWTPayload,
    options?: { key?: CryptoKey; expiresIn?: string | number },
  ): Promise<string>;
  /**
   * Has the provider send its back-channel logout for `sub` (and its session `sid`): the token it posted, when the
   * client's logout URI is the capture.
   */
  logoutToken(sub: string, sid?: string): Promise<string | undefined>;
  close(): Promise<void>;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function loginPage(uid: string, failed: boolean): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Test provider sign-in</title></head>
<body><h1>Test provider</h1>${failed ? '<p role="alert">Wrong password.</p>' : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}">
<label for="login">User</label><input id="login" name="login" autofocus>
<label for="password">Password</label><input id="password" name="password" type="password">
<button type="submit">Sign in</button></form></body></html>`;
}

/** What the provider serves besides its own routes: the token hook and the login page. */
interface ProviderState {
  /** Set once the server listens: the issuer names its port. */
  provider?: Provider;
  answer?: TokenAnswer;
}

async function handle(
  state: ProviderState,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = (request.url ?? '/').split('?')[0]!;
  if (path.startsWith('/interaction/'))
    return interaction(state.provider!, request, response, path.slice('/interaction/'.length));
  if (path === '/token' && request.method === 'POST' && state.answer) {
    const body = await state.answer();
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(JSON.stringify(body));
    return;
  }
  state.provider!.callback()(request, response);
}

/** The provider's login page: any user name, with the test password. */
async function interaction(
  provider: Provider,
  request: IncomingMessage,
  response: ServerResponse,
  uid: string,
): Promise<void> {
  const details = await provider.interactionDetails(request, response);
  if (details.uid !== uid) throw new Error('interaction mismatch');
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(loginPage(uid, false));
    return;
  }
  const form = await readForm(request);
  const login = form.get('login') ?? '';
  if (form.get('password') !== PROVIDER_PASSWORD || login === '') {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(loginPage(uid, true));
    return;
  }
  await provider.interactionFinished(request, response, { login: { accountId: login } });
}

/** The back-channel logout capture: the provider posts here, the test reads what it posted. */
async function startLogoutCapture() {
  const posted: { token?: string | undefined } = {};
  const server: Server = createServer((request, response) => {
    void readForm(request).then((form) => {
      posted.token = form.get('logout_token') ?? undefined;
      response.writeHead(200);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel`;
  return { server, uri, posted };
}

/** The provider's settings: the one client, the signing key, test accounts, consent taken as given. */
function providerConfiguration(client: ProviderClient, captureUri: string, privateJwk: JWK): Configuration {
  return {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: [client.redirectUri],
        post_logout_redirect_uris: [client.postLogoutRedirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        backchannel_logout_uri: client.backchannelLogoutUri ?? captureUri,
        backchannel_logout_session_required: true,
        ...(client.jwks === undefined
          ? { token_endpoint_auth_method: 'client_secret_basic' }
          : { token_endpoint_auth_method: 'private_key_jwt', jwks: client.jwks }),
      },
    ],
    jwks: { keys: [privateJwk] },
    // The provider refuses outgoing requests to loopback addresses (SSRF protection); its back-channel logout goes
    // to the test's capture or server on 127.0.0.1.
    fetch: (url: string | URL | Request, options?: RequestInit) => {
      const { dispatcher: _protected, ...rest } = (options ?? {}) as RequestInit & { dispatcher?: unknown };
      return fetch(url, rest);
    },
    findAccount: (_context, id) => ({
      accountId: id,
      claims: () => ({
        sub: id,
        preferred_username: id,
        name: `Test user ${id}`,
        email: `${id}@example.org`,
      }),
    }),
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email'] },
    // The claims of the scopes in the ID token itself, as many providers do (the relying party reads no userinfo).
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: true },
      backchannelLogout: { enabled: true },
    },
    interactions: { url: (_context, interaction) => `/interaction/${interaction.uid}` },
    // A first-party client: consent is taken as given.
    loadExistingGrant: async (context: KoaContextWithOIDC) => {
      const accountId = context.oidc.session?.accountId;
      if (!accountId || !context.oidc.client) return undefined;
      const grant = new context.oidc.provider.Grant({ clientId: context.oidc.client.clientId, accountId });
      grant.addOIDCScope('openid profile email');
      await grant.save();
      return grant;
    },
    pkce: { required: () => true },
    cookies: { keys: ['test-provider-cookie-key'] },
    ttl: {
      Interaction: 600,
      Grant: 600,
      Session: 600,
      AccessToken: 600,
      IdToken: 600,
      AuthorizationCode: 60,
    },
  };
}

/** Starts the provider on 127.0.0.1 with one confidential client. */
export async function startProvider(client: ProviderClient): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid: KEY_ID, alg: 'RS256', use: 'sig' };
  const capture = await startLogoutCapture();
  const state: ProviderState = {};
  const server: Server = createServer((request, response) => {
    void handle(state, request, response).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, providerConfiguration(client, capture.uri, privateJwk));
  state.provider = provider;
  // Test noise: the provider reports refused requests on its event emitter.
  provider.on('server_error', () => undefined);

  return {
    issuer,
    signingKey: privateKey,
    get answerTokenRequest() {
      return state.answer;
    },
    set answerTokenRequest(value: TokenAnswer | undefined) {
      state.answer = value;
    },
    craftIdToken: (claims, options = {}) =>
      new SignJWT({ preferred_username: 'wilson', ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: KEY_ID })
        .setIssuer(typeof claims.iss === 'string' ? claims.iss : issuer)
        .setAudience(claims.aud ?? client.clientId)
        .setSubject(claims.sub ?? 'wilson')
        .setIssuedAt(typeof claims.iat === 'number' ? claims.iat : undefined)
        .setExpirationTime(typeof claims.exp === 'number' ? claims.exp : (options.expiresIn ?? '5m'))
        .sign(options.key ?? privateKey),
    logoutToken: async (sub, sid) => {
      capture.posted.token = undefined;
      // The provider's own sending of a logout token (its typings omit the method).
      const registered = (await provider.Client.find(client.clientId)) as unknown as {
        backchannelLogout(sub: string, sid: string): Promise<void>;
      };
      await registered.backchannelLogout(sub, sid ?? '');
      return capture.posted.token;
    },
    close: async () => {
      await new Promise<void>((resolve) => capture.server.close(() => resolve()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** Drives the provider's pages as a browser would, up to the redirect back to the service. */
export async function throughProvider(
  authorizationUrl: string,
  login: string,
  redirectUri: string,
): Promise<URL> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  let init: RequestInit = {};
  for (let step = 0; step < 10; step += 1) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie },
    });
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) return next;
      url = next.href;
      init = {};
      continue;
    }
    const action = /<form method="post" action="([^"]+)"/.exec(await response.text())?.[1];
    if (!action) throw new Error('no login form at the provider');
    url = new URL(action, url).href;
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ login, password: PROVIDER_PASSWORD }).toString(),
    };
  }
  throw new Error('the provider did not send the browser back');
}
