import { X509Certificate, createPrivateKey } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { ConfigError, readCertificates, readPrivateKeys } from './config-values.js';

export { ConfigError, readPrivateKeys } from './config-values.js';

/** `EAS_BODY_LIMIT` when not set: 10 MiB. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/** Every setting the process reads from its environment, validated once at start-up. */
const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 7001 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  EAS_CONTEXT_ROOT: Type.String({ pattern: '^/[A-Za-z0-9._~-]+$', default: '/maximo' }),
  EAS_DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  /** Folder of attachment content files (src/attachments/README.md); unset: the data directory's, on PGlite. */
  EAS_ATTACHMENTS_DIR: Type.Optional(Type.String({ minLength: 1 })),
  EAS_ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8 })),
  EAS_DEMO: Type.Boolean({ default: false }),
  EAS_DEMO_PASSWORD: Type.Optional(Type.String({ minLength: 8 })),
  EAS_SERVER_NAME: Type.String({ minLength: 1, default: hostname() }),
  EAS_BODY_LIMIT: Type.Integer({ minimum: 1024, default: DEFAULT_BODY_LIMIT }),
  EAS_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  /** PostgreSQL schema of the tables (with DATABASE_URL): several deployments or test runs share one database. */
  EAS_DB_SCHEMA: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
  /** Key that encrypts secrets at rest (values of encrypted system properties); any text of 16 characters or more. */
  EAS_SECRET_KEY: Type.Optional(Type.String({ minLength: 16 })),
  EAS_AUTH_MODE: Type.Union(
    (['native', 'appserver', 'managed', 'oidc', 'saml'] as const).map((mode) => Type.Literal(mode)),
    { default: 'native' },
  ),
  EAS_LDAP_URL: Type.Optional(Type.String({ pattern: '^ldaps?://[^\\s]+$' })),
  EAS_LDAP_USER_DN_TEMPLATE: Type.Optional(Type.String({ pattern: '\\{0\\}' })),
  EAS_LDAP_SEARCH_BASE: Type.Optional(Type.String({ minLength: 1 })),
  EAS_LDAP_SEARCH_FILTER: Type.String({ pattern: '\\{0\\}', default: '(uid={0})' }),
  EAS_LDAP_BIND_DN: Type.Optional(Type.String({ minLength: 1 })),
  EAS_LDAP_BIND_PASSWORD: Type.Optional(Type.String()),
  EAS_LDAP_UID_ATTRIBUTE: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9-]*$', default: 'uid' }),
  EAS_SESSION_IDLE_MINUTES: Type.Number({ exclusiveMinimum: 0, default: 30 }),
  EAS_SESSION_MAX_MINUTES: Type.Number({ exclusiveMinimum: 0, default: 720 }),
  EAS_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** Client addresses (comma-separated) whose `x-public-uri` header is used; unset: every client's. */
  EAS_PUBLIC_URI_FROM: Type.Optional(Type.String({ minLength: 1 })),
  EAS_MAX_FAILED_LOGINS: Type.Integer({ minimum: 0, default: 10 }),
  /** Minutes a user stays blocked after EAS_MAX_FAILED_LOGINS failures; 0: until an administrator unblocks it. */
  EAS_LOCKOUT_MINUTES: Type.Integer({ minimum: 0, default: 15 }),
  /** Master key of API keys at rest (src/apikeys); unset: generated once into EAS_DATA_DIR. At least 32 characters. */
  EAS_MASTER_KEY: Type.Optional(Type.String({ minLength: 32 })),
  /** Whether /api accepts API keys only; unset: only in the `appserver` and `managed` modes. */
  EAS_API_KEY_ONLY: Type.Optional(Type.Boolean()),
  // Federated login, shared by the `oidc` and `saml` modes (docs/federated-login.md).
  /** Whether an identity-provider user unknown here is created (in EAS_FEDERATED_DEFAULT_GROUP) rather than refused. */
  EAS_FEDERATED_CREATE_USERS: Type.Boolean({ default: false }),
  EAS_FEDERATED_DEFAULT_GROUP: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,30}$' })),
  /** Sign-ins one client address may start per minute on each process (docs/federated-login.md). */
  EAS_FEDERATED_STARTS_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  // The OpenID Connect relying party of the `oidc` mode (docs/federated-login.md).
  EAS_OIDC_ISSUER: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  EAS_OIDC_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  EAS_OIDC_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  EAS_OIDC_REDIRECT_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  EAS_OIDC_SCOPES: Type.String({ pattern: '(^|\\s)openid(\\s|$)', default: 'openid profile email' }),
  EAS_OIDC_USER_CLAIM: Type.String({ minLength: 1, default: 'preferred_username' }),
  EAS_OIDC_POST_LOGOUT_REDIRECT_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  EAS_OIDC_PROVIDER_NAME: Type.String({ minLength: 1, default: 'OpenID Connect' }),
  /** This client's private key (PEM text or path): `private_key_jwt` client authentication instead of a secret. */
  EAS_OIDC_CLIENT_KEY: Type.Optional(Type.String({ minLength: 1 })),
  // Limits of the HTTP listener (docs/operations.md).
  EAS_REQUEST_TIMEOUT_SECONDS: Type.Number({ exclusiveMinimum: 0, default: 30 }),
  EAS_HEADERS_TIMEOUT_SECONDS: Type.Number({ exclusiveMinimum: 0, default: 10 }),
  EAS_KEEP_ALIVE_TIMEOUT_SECONDS: Type.Number({ exclusiveMinimum: 0, default: 72 }),
  EAS_MAX_CONNECTIONS: Type.Integer({ minimum: 1, default: 1000 }),
  /** Open connections one client address may hold; 0: no cap of its own (the reserve still applies). */
  EAS_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({ minimum: 0, default: 100 }),
  EAS_MAX_HEADER_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 * 1024, default: 16 * 1024 }),
  EAS_SHUTDOWN_TIMEOUT_SECONDS: Type.Number({ exclusiveMinimum: 0, default: 10 }),
  /** Live sessions one user may hold; a login past it ends the user's oldest (docs/compatibility.md, "Sessions"). */
  EAS_SESSIONS_PER_USER: Type.Integer({ minimum: 1, default: 100 }),
  // SAML 2.0 service provider of the `saml` mode (docs/federated-login.md, "SAML").
  EAS_SAML_IDP_SSO_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** The identity provider's signing certificate: PEM text, or the path of a PEM file (several certificates: rollover). */
  EAS_SAML_IDP_CERT: Type.Optional(Type.String({ minLength: 1 })),
  EAS_SAML_IDP_ENTITY_ID: Type.Optional(Type.String({ minLength: 1 })),
  EAS_SAML_SP_ENTITY_ID: Type.Optional(Type.String({ minLength: 1 })),
  EAS_SAML_ACS_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** Attribute of the assertion whose value is the user id; unset: the NameID. */
  EAS_SAML_USER_ATTRIBUTE: Type.Optional(Type.String({ minLength: 1 })),
  EAS_SAML_CLOCK_SKEW_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 60 }),
  EAS_SAML_PROVIDER_NAME: Type.String({ minLength: 1, default: 'SAML single sign-on' }),
  EAS_SAML_REQUEST_BINDING: Type.Union(
    (['redirect', 'post'] as const).map((binding) => Type.Literal(binding)),
    { default: 'redirect' },
  ),
  /** This service's own SAML keys (PEM text or path; several while rolling over, the first signs). */
  EAS_SAML_SP_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** The certificates of those keys, all published in the metadata (the first is the signing key's). */
  EAS_SAML_SP_CERT: Type.Optional(Type.String({ minLength: 1 })),
  /** The provider's single logout service; unset: a logout here ends the local session only. */
  EAS_SAML_IDP_SLO_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** Public URL of this service's single logout endpoint (`<context root>/saml/slo`). */
  EAS_SAML_SLO_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** Whether responses the provider sends unasked (sign-in started at its portal) are accepted. */
  EAS_SAML_ALLOW_IDP_INITIATED: Type.Boolean({ default: false }),
  /** Whether XML signatures and digests with SHA-1 (and SigAlg RSA-SHA1) are accepted from the provider. */
  EAS_SAML_ALLOW_SHA1: Type.Boolean({ default: false }),
  /** A port of its own for the metrics, without login; unset: `<context root>/metrics`, administrators only. */
  EAS_METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  EAS_METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /** Whether events are written to the audit trail (docs/audit.md); off only to measure what it costs. */
  EAS_AUDIT: Type.Boolean({ default: true }),
  /** Whether every audit record is also logged, as one structured line at info level (for a log shipper). */
  EAS_AUDIT_LOG: Type.Boolean({ default: false }),
});

type Env = Static<typeof EnvSchema>;

export interface AppConfig {
  port: number;
  host: string;
  /** Context root every route is served under, for example `/maximo`. */
  contextRoot: string;
  dataDir: string;
  /** Where uploaded attachment content is kept as files, when set (else the embedded database's own folder). */
  attachmentsDir: string | undefined;
  databaseUrl: string | undefined;
  adminPassword: string | undefined;
  demo: boolean;
  demoPassword: string | undefined;
  serverName: string;
  bodyLimit: number;
  logLevel: Env['EAS_LOG_LEVEL'];
  databaseSchema: string | undefined;
  secretKey: string | undefined;
  /** Public address of the service (`https://...` makes cookies `Secure`); unset: the address of each request. */
  publicUrl: string | undefined;
  /** The client addresses whose `x-public-uri` is used (a proxy's); undefined: every client's. */
  publicUriFrom: ReadonlySet<string> | undefined;
  auth: AuthConfig;
  /** The SAML service provider; set exactly when EAS_AUTH_MODE is `saml`. */
  saml: SamlConfig | undefined;
  /** Settings both federated modes share (`oidc`, `saml`). */
  federated: FederatedConfig;
  /** The OpenID Connect relying party; set only in the `oidc` mode. */
  oidc: OidcConfig | undefined;
  apiKeys: ApiKeyConfig;
  limits: LimitsConfig;
  metrics: MetricsConfig;
  audit: AuditConfig;
}

/** The audit trail (docs/audit.md). */
export interface AuditConfig {
  /** Whether events are recorded at all (EAS_AUDIT; off only to measure the trail's cost). */
  enabled: boolean;
  /** Whether each record is also logged as one structured info line (EAS_AUDIT_LOG). */
  log: boolean;
}

/** Where the metrics are served (docs/operations.md, "Metrics"). */
export interface MetricsConfig {
  /** A port of their own, without login; undefined: `<context root>/metrics` on the API's port, administrators only. */
  port: number | undefined;
  host: string;
}

/** Limits of the HTTP listener and of shutdown (docs/operations.md); durations in milliseconds. */
export interface LimitsConfig {
  /** Whole request (headers and body) must arrive within this. */
  requestTimeoutMs: number;
  /** Headers must arrive within this (at most the request timeout). */
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Connections above this are closed as they arrive. */
  maxConnections: number;
  /**
   * Connections one client address may hold, above which its new ones are closed as they arrive: the
   * EAS_MAX_CONNECTIONS_PER_ADDRESS, and never more than maxConnections less the reserve kept for other addresses.
   */
  maxConnectionsPerAddress: number;
  /** Request line and headers together. */
  maxHeaderBytes: number;
  /** How long SIGTERM waits for requests in flight before closing their connections. */
  shutdownTimeoutMs: number;
}

export interface ApiKeyConfig {
  /** EAS_MASTER_KEY; undefined: the key file in the data directory. */
  masterKey: string | undefined;
  /** The /api route refuses every call without a valid API key (docs/apikeys.md, "The /api route"). */
  apiRouteKeyOnly: boolean;
}

/**
 * `native`: passwords in the database; `appserver`: BASIC and FORM against LDAP; `managed`: API keys only;
 * `oidc` and `saml`: browsers sign in through an identity provider, headless clients use API keys.
 */
export type AuthMode = Env['EAS_AUTH_MODE'];

/** Whether browsers sign in through an identity provider (docs/federated-login.md). */
export function isFederatedMode(mode: AuthMode): boolean {
  return mode === 'oidc' || mode === 'saml';
}

export interface FederatedConfig {
  /** Create users the identity provider vouches for but this service does not know (else they are refused). */
  createUsers: boolean;
  /** Group such created users join; required when createUsers is set. */
  defaultGroup: string | undefined;
  /** Sign-ins one client address may start per minute on each process. */
  startsPerMinute: number;
}

export interface OidcConfig {
  /** Issuer URL; its `/.well-known/openid-configuration` describes the provider. */
  issuer: string;
  clientId: string;
  /** Unset: a public client (PKCE alone). */
  clientSecret: string | undefined;
  /** PEM private key of `private_key_jwt` client authentication; takes the place of the secret. */
  clientKey: string | undefined;
  /** Absolute URL of the callback route, as registered at the provider. */
  redirectUrl: string;
  scopes: string;
  /** ID-token claim whose value is the user id (or login id). */
  userClaim: string;
  /** Where the provider sends the browser after RP-initiated logout; unset: the sign-in page. */
  postLogoutRedirectUrl: string | undefined;
  /** Name on the sign-in button. */
  providerName: string;
}

export interface LdapConfig {
  url: string;
  /** DN of a user with `{0}` for the login name, e.g. `uid={0},ou=people,dc=example,dc=org`. */
  userDnTemplate: string | undefined;
  /** Where to search for the user's entry when there is no DN template. */
  searchBase: string | undefined;
  searchFilter: string;
  /** Identity for the search (anonymous when unset). */
  bindDn: string | undefined;
  bindPassword: string | undefined;
  /** Attribute whose value is the user id of the user record. */
  uidAttribute: string;
}

export interface AuthConfig {
  mode: AuthMode;
  ldap: LdapConfig | undefined;
  sessionIdleMinutes: number;
  sessionMaxMinutes: number;
  /** Failed logins after which a user is blocked; 0 = never. */
  maxFailedLogins: number;
  /** Minutes such a block lasts; 0 = until an administrator reactivates the user. */
  lockoutMinutes: number;
  /** Live sessions per user; a new login ends the oldest beyond it. */
  sessionsPerUser: number;
}

/** The SAML 2.0 service provider (docs/federated-login.md, "SAML"). */
export interface SamlConfig {
  /** Where browsers are sent with the authentication request. */
  idpSsoUrl: string;
  /** PEM certificates whose keys may sign responses and assertions (more than one while the provider rolls over). */
  idpCertificates: string[];
  /** The `Issuer` the responses must carry; unset: not checked. */
  idpEntityId: string | undefined;
  /** This service's entity id: the audience assertions must name. */
  spEntityId: string;
  /** The assertion consumer service: the Recipient and Destination responses must name. */
  acsUrl: string;
  /** Attribute whose value is the user id; undefined: the NameID. */
  userAttribute: string | undefined;
  clockSkewSeconds: number;
  /** Name on the sign-in page's button. */
  providerName: string;
  /** How the authentication request travels to the provider: a redirect, or a form the browser posts. */
  requestBinding: 'redirect' | 'post';
  /** This service's own key pair, when configured: requests signed, assertions may be encrypted. */
  spKeys: SamlKeyPair | undefined;
  /** The provider's single logout service: where logouts started here go (and their signed requests). */
  idpSloUrl: string | undefined;
  /** This service's single logout endpoint, as the provider reaches it. */
  sloUrl: string;
  /** Responses that answer no request of this service (IdP-initiated sign-in) are accepted. */
  allowIdpInitiated: boolean;
  /** SHA-1 signatures and digests of the provider's messages are accepted (refused by default). */
  allowSha1: boolean;
}

/** This service provider's keys (docs/federated-login.md, "Keys and rollover"). */
export interface SamlKeyPair {
  /** PEM private keys: the first signs, every one may decrypt (an assertion encrypted for the previous key). */
  privateKeys: string[];
  /** PEM certificates: the first is the signing key's, all are published in the metadata. */
  certificates: string[];
}

const booleanWords: Record<string, boolean> = {
  '1': true,
  true: true,
  yes: true,
  '0': false,
  false: false,
  no: false,
};

function coerce(name: string, raw: string): unknown {
  const schema = EnvSchema.properties[name as keyof Env];
  if (Type.IsInteger(schema)) {
    if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
    return Number(raw);
  }
  if (Type.IsNumber(schema)) {
    if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(name, `must be a number, got "${raw}"`);
    return Number(raw);
  }
  if (Type.IsBoolean(schema)) {
    const value = booleanWords[raw.toLowerCase()];
    if (value === undefined) throw new ConfigError(name, `must be 1 or 0, got "${raw}"`);
    return value;
  }
  return raw;
}

/** Reads the environment into one typed object; the first bad variable stops start-up with its name. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const input: Record<string, unknown> = {};
  for (const name of Object.keys(EnvSchema.properties)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') input[name] = coerce(name, raw);
  }
  const withDefaults = Value.Default(EnvSchema, input);
  const firstError = Value.Errors(EnvSchema, withDefaults)[0];
  if (firstError) {
    const variable = firstError.instancePath.replace(/^\//, '') || 'environment';
    throw new ConfigError(variable, firstError.message);
  }
  const parsed = withDefaults as Env;
  const ldap = readLdap(parsed);
  return {
    port: parsed.PORT,
    host: parsed.HOST,
    contextRoot: parsed.EAS_CONTEXT_ROOT,
    dataDir: resolve(parsed.EAS_DATA_DIR),
    attachmentsDir:
      parsed.EAS_ATTACHMENTS_DIR === undefined ? undefined : resolve(parsed.EAS_ATTACHMENTS_DIR),
    databaseUrl: parsed.DATABASE_URL,
    adminPassword: parsed.EAS_ADMIN_PASSWORD,
    demo: parsed.EAS_DEMO,
    demoPassword: parsed.EAS_DEMO_PASSWORD,
    serverName: parsed.EAS_SERVER_NAME,
    bodyLimit: parsed.EAS_BODY_LIMIT,
    logLevel: parsed.EAS_LOG_LEVEL,
    databaseSchema: parsed.EAS_DB_SCHEMA,
    secretKey: parsed.EAS_SECRET_KEY,
    publicUrl: parsed.EAS_PUBLIC_URL,
    publicUriFrom: addressList(parsed.EAS_PUBLIC_URI_FROM),
    auth: {
      mode: parsed.EAS_AUTH_MODE,
      ldap,
      sessionIdleMinutes: parsed.EAS_SESSION_IDLE_MINUTES,
      sessionMaxMinutes: parsed.EAS_SESSION_MAX_MINUTES,
      maxFailedLogins: parsed.EAS_MAX_FAILED_LOGINS,
      lockoutMinutes: parsed.EAS_LOCKOUT_MINUTES,
      sessionsPerUser: parsed.EAS_SESSIONS_PER_USER,
    },
    saml: readSaml(parsed),
    federated: readFederated(parsed),
    oidc: readOidc(parsed),
    apiKeys: {
      masterKey: parsed.EAS_MASTER_KEY,
      apiRouteKeyOnly: readApiRouteKeyOnly(parsed),
    },
    limits: {
      requestTimeoutMs: Math.round(parsed.EAS_REQUEST_TIMEOUT_SECONDS * 1000),
      headersTimeoutMs: Math.round(
        Math.min(parsed.EAS_HEADERS_TIMEOUT_SECONDS, parsed.EAS_REQUEST_TIMEOUT_SECONDS) * 1000,
      ),
      keepAliveTimeoutMs: Math.round(parsed.EAS_KEEP_ALIVE_TIMEOUT_SECONDS * 1000),
      maxConnections: parsed.EAS_MAX_CONNECTIONS,
      maxConnectionsPerAddress: perAddressCap(
        parsed.EAS_MAX_CONNECTIONS,
        parsed.EAS_MAX_CONNECTIONS_PER_ADDRESS,
      ),
      maxHeaderBytes: parsed.EAS_MAX_HEADER_BYTES,
      shutdownTimeoutMs: Math.round(parsed.EAS_SHUTDOWN_TIMEOUT_SECONDS * 1000),
    },
    metrics: { port: parsed.EAS_METRICS_PORT, host: parsed.EAS_METRICS_HOST },
    audit: { enabled: parsed.EAS_AUDIT, log: parsed.EAS_AUDIT_LOG },
  };
}

/**
 * The connections one address may hold (docs/operations.md, "Connections per address"): a tenth of
 * EAS_MAX_CONNECTIONS is kept for other addresses whatever the per-address setting, so that one address holding
 * all it may still leaves others served.
 */
function perAddressCap(maxConnections: number, perAddress: number): number {
  const reserve = Math.floor(maxConnections / 10);
  const ceiling = Math.max(1, maxConnections - reserve);
  return perAddress === 0 ? ceiling : Math.min(perAddress, ceiling);
}

/**
 * The service provider's key pair: keys and certificates pair up in order (the first key signs with the first
 * certificate), so that a rollover lists the new pair after the old one, then moves it first.
 */
function readSamlKeyPair(parsed: Env): SamlKeyPair | undefined {
  if (parsed.EAS_SAML_SP_KEY === undefined && parsed.EAS_SAML_SP_CERT === undefined) return undefined;
  if (parsed.EAS_SAML_SP_KEY === undefined)
    throw new ConfigError('EAS_SAML_SP_KEY', 'is required with EAS_SAML_SP_CERT');
  if (parsed.EAS_SAML_SP_CERT === undefined)
    throw new ConfigError('EAS_SAML_SP_CERT', 'is required with EAS_SAML_SP_KEY');
  const privateKeys = readPrivateKeys(parsed.EAS_SAML_SP_KEY, 'EAS_SAML_SP_KEY');
  const certificates = readCertificates(parsed.EAS_SAML_SP_CERT, 'EAS_SAML_SP_CERT');
  const signing = new X509Certificate(certificates[0]!);
  if (!signing.checkPrivateKey(createPrivateKey(privateKeys[0]!))) {
    throw new ConfigError(
      'EAS_SAML_SP_CERT',
      'does not start with the certificate of the first EAS_SAML_SP_KEY',
    );
  }
  return { privateKeys, certificates };
}

/**
 * The service provider of `saml` mode. The entity id and the consumer address default to addresses under
 * EAS_PUBLIC_URL (the metadata and ACS routes), since the identity provider must reach them from the browser.
 */
function readSaml(parsed: Env): SamlConfig | undefined {
  if (parsed.EAS_AUTH_MODE !== 'saml') return undefined;
  const required = (name: keyof Env): never => {
    throw new ConfigError(name, 'is required when EAS_AUTH_MODE is saml');
  };
  const publicUrl = parsed.EAS_PUBLIC_URL?.replace(/\/+$/, '');
  const publicBase =
    publicUrl === undefined || publicUrl.endsWith(parsed.EAS_CONTEXT_ROOT)
      ? publicUrl
      : `${publicUrl}${parsed.EAS_CONTEXT_ROOT}`;
  const acsUrl =
    parsed.EAS_SAML_ACS_URL ??
    (publicBase === undefined ? required('EAS_SAML_ACS_URL') : `${publicBase}/saml/acs`);
  const spEntityId =
    parsed.EAS_SAML_SP_ENTITY_ID ??
    (publicBase === undefined ? required('EAS_SAML_SP_ENTITY_ID') : `${publicBase}/saml/metadata`);
  return {
    idpSsoUrl: parsed.EAS_SAML_IDP_SSO_URL ?? required('EAS_SAML_IDP_SSO_URL'),
    idpCertificates: readCertificates(parsed.EAS_SAML_IDP_CERT ?? required('EAS_SAML_IDP_CERT')),
    idpEntityId: parsed.EAS_SAML_IDP_ENTITY_ID,
    spEntityId,
    acsUrl,
    userAttribute: parsed.EAS_SAML_USER_ATTRIBUTE,
    clockSkewSeconds: parsed.EAS_SAML_CLOCK_SKEW_SECONDS,
    requestBinding: parsed.EAS_SAML_REQUEST_BINDING,
    providerName: parsed.EAS_SAML_PROVIDER_NAME,
    spKeys: readSamlKeyPair(parsed),
    idpSloUrl: parsed.EAS_SAML_IDP_SLO_URL,
    sloUrl: parsed.EAS_SAML_SLO_URL ?? new URL('slo', acsUrl).href,
    allowIdpInitiated: parsed.EAS_SAML_ALLOW_IDP_INITIATED,
    allowSha1: parsed.EAS_SAML_ALLOW_SHA1,
  };
}

/** The one private key of `private_key_jwt`; a client authenticates one way, so not with a secret as well. */
function readOidcClientKey(parsed: Env): string | undefined {
  if (parsed.EAS_OIDC_CLIENT_KEY === undefined) return undefined;
  if (parsed.EAS_OIDC_CLIENT_SECRET !== undefined) {
    throw new ConfigError('EAS_OIDC_CLIENT_KEY', 'cannot be set together with EAS_OIDC_CLIENT_SECRET');
  }
  const keys = readPrivateKeys(parsed.EAS_OIDC_CLIENT_KEY, 'EAS_OIDC_CLIENT_KEY');
  if (keys.length > 1) throw new ConfigError('EAS_OIDC_CLIENT_KEY', 'holds more than one private key');
  return keys[0];
}

/** In the federated modes /api is the headless clients' route: API keys only, whatever else is set. */
function readApiRouteKeyOnly(parsed: Env): boolean {
  if (isFederatedMode(parsed.EAS_AUTH_MODE)) {
    if (parsed.EAS_API_KEY_ONLY === false) {
      throw new ConfigError(
        'EAS_API_KEY_ONLY',
        `cannot be off when EAS_AUTH_MODE is ${parsed.EAS_AUTH_MODE}`,
      );
    }
    return true;
  }
  return parsed.EAS_API_KEY_ONLY ?? parsed.EAS_AUTH_MODE !== 'native';
}

function readFederated(parsed: Env): FederatedConfig {
  if (parsed.EAS_FEDERATED_CREATE_USERS && !parsed.EAS_FEDERATED_DEFAULT_GROUP) {
    throw new ConfigError(
      'EAS_FEDERATED_DEFAULT_GROUP',
      'is required when EAS_FEDERATED_CREATE_USERS is set',
    );
  }
  return {
    createUsers: parsed.EAS_FEDERATED_CREATE_USERS,
    defaultGroup: parsed.EAS_FEDERATED_DEFAULT_GROUP?.toUpperCase(),
    startsPerMinute: parsed.EAS_FEDERATED_STARTS_PER_MINUTE,
  };
}

/** Hosts on which an identity provider may be reached over plain http (tests, a provider on the same machine). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** The OIDC callback route, relative to the context root. */
export const OIDC_CALLBACK_PATH = '/oidc/callback';

/** The relying party of `oidc` mode: issuer, client id and redirect URL are required. */
function readOidc(parsed: Env): OidcConfig | undefined {
  if (parsed.EAS_AUTH_MODE !== 'oidc') return undefined;
  for (const name of ['EAS_OIDC_ISSUER', 'EAS_OIDC_CLIENT_ID', 'EAS_OIDC_REDIRECT_URL'] as const) {
    if (!parsed[name]) throw new ConfigError(name, 'is required when EAS_AUTH_MODE is oidc');
  }
  const issuer = new URL(parsed.EAS_OIDC_ISSUER!);
  if (issuer.protocol === 'http:' && !LOOPBACK_HOSTS.has(issuer.hostname)) {
    throw new ConfigError(
      'EAS_OIDC_ISSUER',
      'must be an https:// URL (http:// only on the loopback address)',
    );
  }
  const callback = `${parsed.EAS_CONTEXT_ROOT}${OIDC_CALLBACK_PATH}`;
  if (new URL(parsed.EAS_OIDC_REDIRECT_URL!).pathname !== callback) {
    throw new ConfigError('EAS_OIDC_REDIRECT_URL', `must be the public address of ${callback}`);
  }
  return {
    issuer: parsed.EAS_OIDC_ISSUER!,
    clientId: parsed.EAS_OIDC_CLIENT_ID!,
    clientSecret: parsed.EAS_OIDC_CLIENT_SECRET,
    clientKey: readOidcClientKey(parsed),
    redirectUrl: parsed.EAS_OIDC_REDIRECT_URL!,
    scopes: parsed.EAS_OIDC_SCOPES,
    userClaim: parsed.EAS_OIDC_USER_CLAIM,
    postLogoutRedirectUrl: parsed.EAS_OIDC_POST_LOGOUT_REDIRECT_URL,
    providerName: parsed.EAS_OIDC_PROVIDER_NAME,
  };
}

/** The directory of `appserver` mode: a URL and either a DN template or a search base. */
function readLdap(parsed: Env): LdapConfig | undefined {
  if (parsed.EAS_AUTH_MODE !== 'appserver') return undefined;
  if (!parsed.EAS_LDAP_URL)
    throw new ConfigError('EAS_LDAP_URL', 'is required when EAS_AUTH_MODE is appserver');
  if (!parsed.EAS_LDAP_USER_DN_TEMPLATE && !parsed.EAS_LDAP_SEARCH_BASE) {
    throw new ConfigError(
      'EAS_LDAP_USER_DN_TEMPLATE',
      'or EAS_LDAP_SEARCH_BASE is required when EAS_AUTH_MODE is appserver',
    );
  }
  return {
    url: parsed.EAS_LDAP_URL,
    userDnTemplate: parsed.EAS_LDAP_USER_DN_TEMPLATE,
    searchBase: parsed.EAS_LDAP_SEARCH_BASE,
    searchFilter: parsed.EAS_LDAP_SEARCH_FILTER,
    bindDn: parsed.EAS_LDAP_BIND_DN,
    bindPassword: parsed.EAS_LDAP_BIND_PASSWORD,
    uidAttribute: parsed.EAS_LDAP_UID_ATTRIBUTE,
  };
}

/** A comma-separated list of addresses, each as the request's `ip` shows it; unset: none given. */
function addressList(text: string | undefined): ReadonlySet<string> | undefined {
  if (text === undefined) return undefined;
  return new Set(
    text
      .split(',')
      .map((address) => address.trim())
      .filter((address) => address !== ''),
  );
}
