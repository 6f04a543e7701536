// The SAML 2.0 service provider, on @node-saml/node-saml (docs/federated-login.md, "SAML"). The library builds the
// authentication request and the SP metadata, and verifies the response: XML signature (xml-crypto) of the response
// or of the assertion against the configured certificates only, the issuer, the audience and the conditions' time
// window. What it leaves to its caller is done here: the bearer subject confirmation (recipient, InResponseTo, time
// window), the response's Destination, and replay, in the database so that every process sees every consumption.
// With a key pair of its own it signs its requests and decrypts assertions; single logout is in logout.ts.
import type { SAML, CacheProvider, Profile } from '@node-saml/node-saml';
import type { SamlConfig } from '../../config.js';
import { errors } from '../../errors.js';
import type { ProviderSession } from '../federated/provider-sessions.js';
import { libraryOptions, REQUEST_VALIDITY_MS, type LibraryUse } from './library.js';
import { serviceProviderMetadata } from './metadata.js';
import { spendLogoutMessage } from '../federated/logout-replay.js';
import { sha1Algorithms, sha1AlgorithmsOf } from './algorithms.js';
import {
  consumeAssertion,
  countOutstanding,
  deleteExpired,
  findRequest,
  saveRequest,
  type SamlDb,
} from './repository.js';

export { REQUEST_VALIDITY_MS } from './library.js';
/** Longest assertion id kept (the column's length); a longer one is refused rather than cut. */
const MAX_ASSERTION_ID_LENGTH = 256;
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const CLEANUP_INTERVAL_MS = 60_000;
/**
 * Requests left unanswered one client address may hold (its oldest are forgotten beyond), and all addresses together
 * (new starts are refused beyond): docs/federated-login.md, "Bounds on sign-in starts".
 */
export const MAX_REQUESTS_PER_ADDRESS = 100;
export const MAX_REQUESTS = 20_000;
/**
 * How long after its IssueInstant a LogoutRequest without NotOnOrAfter is accepted (plus the clock skew): the provider
 * sends it as the person logs out, so an older one can only be a replay (docs/federated-login.md, "Single logout").
 */
export const LOGOUT_REQUEST_WINDOW_MS = 5 * 60_000;
/** The library's (and OpenSSL's) words for a key that cannot decrypt the assertion's key. */
const DECRYPTION_FAILURE = /decrypt|EncryptedAssertion|EncryptedKey|oaep|rsa routines|padding/i;

/** Where to send the browser to start a sign-in, by the configured binding, and the id of the request sent. */
export type LoginStart = { requestId: string } & (
  | { binding: 'redirect'; location: string }
  | { binding: 'post'; action: string; fields: Record<string, string> }
);

/** What a verified, unused assertion says: who signed in. */
export interface SamlSignIn {
  /** The user id as the assertion gives it (NameID or the configured attribute), trimmed. */
  identity: string;
  assertionId: string;
  issuer: string | undefined;
  /** For a user created at sign-in (docs/federated-login.md, "Users"): `displayName` and mail attributes. */
  displayName: string | undefined;
  email: string | undefined;
  /** The provider's session, which its single logout names. */
  provider: ProviderSession;
}

export interface SamlServiceOptions {
  config: SamlConfig;
  db: SamlDb;
  now?: () => number;
  /** Why a response was refused, in the library's words (the client gets a shorter reason). */
  logRefusal?: (detail: string) => void;
}

/** The parts of the signed assertion read here, as the library parses it (xml2js, namespace prefixes removed). */
interface ParsedAssertion {
  Assertion?: {
    $?: { ID?: string };
    Subject?: Array<{
      SubjectConfirmation?: Array<{
        $?: { Method?: string };
        SubjectConfirmationData?: Array<{
          $?: { Recipient?: string; InResponseTo?: string; NotBefore?: string; NotOnOrAfter?: string };
        }>;
      }>;
    }>;
    Conditions?: Array<{ $?: { NotOnOrAfter?: string } }>;
  };
}

type ConfirmationData = NonNullable<
  NonNullable<
    NonNullable<
      NonNullable<NonNullable<ParsedAssertion['Assertion']>['Subject']>[number]['SubjectConfirmation']
    >[number]['SubjectConfirmationData']
  >[number]['$']
>;

export class SamlService {
  /** The library's service providers, by use, each built at its first use (see library()). */
  private readonly instances = new Map<string, Promise<SAML>>();
  private readonly requests: CacheProvider;
  /**
   * The request being built by `startLogin`: the library saves it (`saveAsync`) before its first await, so it is set
   * around that synchronous part only, and the id is caught there. Not an AsyncLocalStorage: on Node.js 20 one turns
   * on async hooks for every promise of the process, for good (src/audit/README.md, "Request context").
   */
  private issuing: { requestId?: string; address: string } | undefined;
  private readonly now: () => number;
  private readonly skewMs: number;
  /** When this process last deleted expired rows on a sign-in start (see startLogin). */
  private lastCleanup = 0;

  /** Text of the sign-in page's button. */
  readonly providerName: string;
  /**
   * Whether responses must come back to the browser that started the sign-in. The proof is a cookie the provider's
   * cross-site POST carries only as `SameSite=None; Secure`, so only over https: an ACS on plain http is not bound.
   */
  readonly bindsBrowser: boolean;

  constructor(private readonly options: SamlServiceOptions) {
    const { config, db } = options;
    this.providerName = config.providerName;
    this.bindsBrowser = config.acsUrl.startsWith('https://');
    this.now = options.now ?? Date.now;
    this.skewMs = config.clockSkewSeconds * 1000;
    const now = this.now;
    // Requests are remembered in the database, not in the library's per-process memory: the response may come back
    // to another process. They stay until they expire; the assertion, not the request, is what is used once.
    this.requests = {
      saveAsync: async (key, value) => {
        const issuing = this.issuing;
        this.issuing = undefined;
        if (issuing) issuing.requestId = key;
        const issued = new Date(now());
        const expires = new Date(issued.getTime() + REQUEST_VALIDITY_MS);
        await saveRequest(
          db,
          { requestId: key, issued, expires, address: issuing?.address ?? '' },
          MAX_REQUESTS_PER_ADDRESS,
        );
        return { value, createdAt: issued.getTime() };
      },
      getAsync: async (key) => (await findRequest(db, key, new Date(now())))?.toISOString() ?? null,
      removeAsync: async () => null,
    };
  }

  /**
   * The library is loaded at the first sign-in or logout, not at start-up: a server that does not use SAML never
   * compiles it (docs/startup.md). The settings were checked by the configuration already.
   */
  library(use: LibraryUse = { decryptionKey: 0, encrypted: false, logout: false }): Promise<SAML> {
    const name = `${use.decryptionKey} ${use.encrypted} ${use.logout}`;
    let instance = this.instances.get(name);
    if (!instance) {
      instance = import('@node-saml/node-saml').then(
        ({ SAML, ValidateInResponseTo }) =>
          new SAML(libraryOptions(this.options.config, use, this.requests, ValidateInResponseTo)),
      );
      this.instances.set(name, instance);
    }
    return instance;
  }

  /** The SP metadata document (metadata.ts), for the identity provider's setup. */
  metadata(): string {
    return serviceProviderMetadata(this.options.config);
  }

  /**
   * A new authentication request, remembered for REQUEST_VALIDITY_MS; `relayState` comes back with the response.
   * `address`: the client's, whose unanswered requests are bounded. 429 `EAS0195E` when MAX_REQUESTS are waiting.
   */
  async startLogin(relayState: string, address: string): Promise<LoginStart> {
    const { config, db } = this.options;
    // Starts are public and may come in floods: expired requests are deleted at most once a minute per process here,
    // and at every accepted response.
    if (this.now() - this.lastCleanup > CLEANUP_INTERVAL_MS) {
      this.lastCleanup = this.now();
      await deleteExpired(db, new Date(this.lastCleanup));
    }
    if ((await countOutstanding(db, new Date(this.now()))) >= MAX_REQUESTS) {
      this.logRefusal(`start: ${MAX_REQUESTS} requests are waiting for an answer`);
      throw errors.tooManySignInStarts(Math.ceil(CLEANUP_INTERVAL_MS / 1000));
    }
    const saml = await this.library();
    const issuing: { requestId?: string; address: string } = { address };
    this.issuing = issuing;
    let built: Promise<Record<string, unknown> | string>;
    try {
      built =
        config.requestBinding === 'post'
          ? saml.getAuthorizeMessageAsync(relayState, undefined, {})
          : saml.getAuthorizeUrlAsync(relayState, undefined, {});
    } finally {
      this.issuing = undefined;
    }
    const answer = await built;
    // Should the library ever save the request after an await, the start fails here rather than go unbound.
    if (issuing.requestId === undefined)
      throw new Error('The SAML library did not save the request as it built it');
    if (typeof answer === 'string')
      return { binding: 'redirect', location: answer, requestId: issuing.requestId };
    const fields: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer)) if (typeof value === 'string') fields[name] = value;
    return { binding: 'post', action: config.idpSsoUrl, fields, requestId: issuing.requestId };
  }

  /**
   * Verifies a response (the HTTP-POST binding's `SAMLResponse`) and consumes its assertion: the sign-in, or a
   * MaximoError that says why it is refused. `startedHere`: the requests the browser that brings the response
   * started, when it can tell (undefined: not checked).
   */
  async acceptResponse(samlResponse: string, startedHere?: readonly string[]): Promise<SamlSignIn> {
    const { config, db } = this.options;
    const shape = await responseShape(samlResponse);
    if (shape.destination !== undefined && shape.destination !== config.acsUrl) {
      throw this.refuse(
        `the response is addressed to ${shape.destination}`,
        `Destination ${shape.destination}`,
      );
    }
    this.refuseSha1(shape.sha1, 'the response');
    if (shape.encrypted && config.spKeys === undefined) {
      throw this.refuse(
        'its assertion is encrypted and this service has no key',
        'EncryptedAssertion, no key',
      );
    }
    const profile = await this.verifiedProfile(samlResponse, shape.encrypted);
    // The library compares the issuer of logout messages only; the assertion's (signed) issuer is checked here.
    if (config.idpEntityId !== undefined && profile.issuer !== config.idpEntityId) {
      throw this.refuse('it comes from another identity provider', `Issuer ${profile.issuer ?? '(none)'}`);
    }
    const assertion = (profile.getAssertion?.() ?? {}) as ParsedAssertion;
    const assertionId = assertion.Assertion?.$?.ID;
    if (!assertionId || assertionId.length > MAX_ASSERTION_ID_LENGTH) {
      throw this.refuse('its assertion has no usable ID', 'assertion ID missing or too long');
    }
    const confirmation = this.bearerConfirmation(assertion);
    const now = new Date(this.now());
    const requestId = confirmation.InResponseTo;
    // IdP-initiated (unsolicited) responses answer no request: allowed only when configured (bearerConfirmation).
    if (requestId !== undefined && requestId !== '') await this.checkAnswered(requestId, startedHere, now);
    const identity = this.identityOf(profile);
    const expires = new Date(
      Math.max(
        Date.parse(confirmation.NotOnOrAfter!),
        Date.parse(assertion.Assertion?.Conditions?.[0]?.$?.NotOnOrAfter ?? '') || 0,
      ) + this.skewMs,
    );
    await deleteExpired(db, now);
    const fresh = await consumeAssertion(db, {
      assertionId,
      userid: identity.slice(0, 30),
      consumed: now,
      expires,
    });
    if (!fresh) throw errors.samlAssertionReplayed(assertionId);
    return {
      identity,
      assertionId,
      issuer: profile.issuer,
      displayName: firstText(profile.attributes, 'displayName'),
      email: typeof profile.email === 'string' ? profile.email : firstText(profile.attributes, 'email'),
      provider: {
        subject: profile.nameID,
        subjectFormat: profile.nameIDFormat,
        providerSession: profile.sessionIndex,
      },
    };
  }

  /**
   * The library's verification: only what a configured certificate signed is read. An encrypted assertion is tried
   * with each of this service's keys (the provider may still encrypt for the previous one during a rollover).
   */
  private async verifiedProfile(samlResponse: string, encrypted: boolean): Promise<Profile> {
    const keys = encrypted ? (this.options.config.spKeys?.privateKeys.length ?? 1) : 1;
    let failure = '';
    for (let decryptionKey = 0; decryptionKey < keys; decryptionKey += 1) {
      const saml = await this.library({ decryptionKey, encrypted, logout: false });
      let profile: Profile | null;
      try {
        ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
        // Only a key that cannot decrypt makes the next one worth trying.
        if (!DECRYPTION_FAILURE.test(failure) || /signature/i.test(failure)) break;
        continue;
      }
      if (!profile) throw this.refuse('it holds no assertion', 'no profile');
      // An encrypted assertion's own signature could not be read before it was decrypted.
      if (encrypted)
        this.refuseSha1(await sha1AlgorithmsOf(profile.getAssertionXml?.() ?? ''), 'the assertion');
      return profile;
    }
    throw this.refuse(reasonOf(failure), failure);
  }

  /** A response to a request must answer one this service sent, and (when it can tell) this browser started. */
  private async checkAnswered(requestId: string, startedHere: readonly string[] | undefined, now: Date) {
    // A valid response for one browser must not sign in another (login CSRF: a victim signed in as the attacker).
    if (startedHere !== undefined && !startedHere.includes(requestId)) {
      throw this.refuse(
        'it answers a sign-in this browser did not start',
        `InResponseTo ${requestId} not started here`,
      );
    }
    if ((await findRequest(this.options.db, requestId, now)) === undefined) {
      throw this.refuse('it answers no sign-in request of this service', `InResponseTo ${requestId}`);
    }
  }

  /**
   * The bearer confirmation (SAML Web Browser SSO profile): addressed to this ACS, in its time window, answering a
   * request. Only the signed assertion is read, so none of it can have been added after signing.
   */
  private bearerConfirmation(assertion: ParsedAssertion): ConfirmationData {
    const { acsUrl } = this.options.config;
    const now = this.now();
    const candidates = (assertion.Assertion?.Subject?.[0]?.SubjectConfirmation ?? [])
      .filter((confirmation) => confirmation.$?.Method === BEARER)
      .map((confirmation) => confirmation.SubjectConfirmationData?.[0]?.$)
      .filter((data): data is ConfirmationData => data !== undefined);
    if (candidates.length === 0) throw this.refuse('its assertion has no bearer confirmation', 'no bearer');
    const forUs = candidates.filter((data) => data.Recipient === acsUrl);
    if (forUs.length === 0) {
      const recipients = candidates.map((data) => data.Recipient ?? '(none)').join(', ');
      throw this.refuse(`its assertion is meant for another recipient`, `Recipient ${recipients}`);
    }
    const inTime = forUs.filter((data) => {
      const notOnOrAfter = Date.parse(data.NotOnOrAfter ?? '');
      const notBefore = data.NotBefore === undefined ? -Infinity : Date.parse(data.NotBefore);
      return now - this.skewMs < notOnOrAfter && notBefore <= now + this.skewMs;
    });
    if (inTime.length === 0)
      throw this.refuse('its assertion has expired or is not valid yet', 'subject time');
    const answering = inTime.find(
      (data) => typeof data.InResponseTo === 'string' && data.InResponseTo !== '',
    );
    if (answering) return answering;
    if (!this.options.config.allowIdpInitiated) {
      throw this.refuse('it answers no sign-in request of this service', 'no InResponseTo');
    }
    return inTime[0]!;
  }

  /** The user id: the configured attribute's (first) value, else the NameID. */
  private identityOf(profile: Profile): string {
    const attribute = this.options.config.userAttribute;
    const value =
      attribute === undefined
        ? typeof profile.nameID === 'string' && profile.nameID.trim() !== ''
          ? profile.nameID.trim()
          : undefined
        : firstText(profile.attributes, attribute);
    if (value === undefined) {
      const source = attribute === undefined ? 'a NameID' : `the attribute ${attribute}`;
      throw this.refuse(`its assertion has no value for ${source}`, `no ${source}`);
    }
    return value;
  }

  /**
   * SHA-1 signatures and digests can be forged (chosen-prefix collisions): refused unless EAS_SAML_ALLOW_SHA1 admits
   * a provider that cannot sign otherwise (docs/federated-login.md, "Algorithms"). `found`: the algorithms seen.
   */
  private refuseSha1(found: readonly string[], what: string): void {
    if (found.length === 0 || this.options.config.allowSha1) return;
    throw this.refuse(`${what} is signed with SHA-1, which is not accepted`, `SHA-1: ${found.join(', ')}`);
  }

  /** Whether a SHA-1 algorithm (an XML signature's, or a redirect's SigAlg) may be accepted from the provider. */
  get allowsSha1(): boolean {
    return this.options.config.allowSha1;
  }

  /**
   * The provider's LogoutRequest, verified, used once (docs/federated-login.md, "Single logout"): issued no later than
   * the clock skew allows, and without NotOnOrAfter no earlier than LOGOUT_REQUEST_WINDOW_MS ago; then remembered in
   * the database until it would be refused by its dates anyway, so that a replay to any process ends nothing. Why it
   * is refused, or undefined when it may end sessions.
   */
  async spendLogoutRequest(request: {
    id: string;
    issuer: string;
    issueInstant?: string | undefined;
    notOnOrAfter?: string | undefined;
  }): Promise<string | undefined> {
    const now = this.now();
    const issued = Date.parse(request.issueInstant ?? '');
    if (Number.isNaN(issued)) return 'it has no valid IssueInstant';
    if (issued > now + this.skewMs) return 'it is issued in the future';
    let expires: number;
    if (request.notOnOrAfter === undefined) {
      expires = issued + LOGOUT_REQUEST_WINDOW_MS + this.skewMs;
    } else {
      const notOnOrAfter = Date.parse(request.notOnOrAfter);
      if (Number.isNaN(notOnOrAfter)) return 'its NotOnOrAfter is not a time';
      expires = notOnOrAfter + this.skewMs;
    }
    if (expires <= now) return 'it has expired';
    const use = await spendLogoutMessage(
      this.options.db,
      { scheme: 'SAML', issuer: request.issuer, messageId: request.id, expires: new Date(expires) },
      new Date(now),
    );
    if (use === 'replayed') return 'it was used already';
    if (use === 'unrememberable') return 'its ID or issuer is too long';
    return undefined;
  }

  private refuse(reason: string, detail: string) {
    this.logRefusal(detail);
    return errors.samlResponseRefused(reason);
  }

  /** Notes why a message was refused, in the library's words (the client gets a shorter reason). */
  logRefusal(detail: string): void {
    this.options.logRefusal?.(detail);
  }

  get config(): SamlConfig {
    return this.options.config;
  }
}

/** The first value of an attribute, when it is text. */
function firstText(attributes: unknown, name: string): string | undefined {
  const raw: unknown = (attributes as Record<string, unknown> | undefined)?.[name];
  const value = Array.isArray(raw) ? (raw as unknown[])[0] : raw;
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The library's messages, shortened to what the person or administrator needs (the log has them in full). */
function reasonOf(detail: string): string {
  if (/signature/i.test(detail)) return 'it is not signed by a certificate of the identity provider';
  if (DECRYPTION_FAILURE.test(detail)) return "its assertion cannot be decrypted with this service's keys";
  if (/audience/i.test(detail)) return 'its assertion is meant for another audience';
  // The library's subject-confirmation search keeps only confirmations in their time window.
  if (/expired|not yet valid|NotBefore|NotOnOrAfter|valid subject confirmation/i.test(detail))
    return 'its assertion has expired or is not valid yet';
  if (/issuer/i.test(detail)) return 'it comes from another identity provider';
  if (/InResponseTo/i.test(detail)) return 'it answers no sign-in request of this service';
  if (/status|error:/i.test(detail)) return `the identity provider reports a failure (${detail})`;
  return 'it is not a valid SAML response';
}

/**
 * What the raw message says before verification: the Response's `Destination` (compared only, never trusted: a
 * response that names another endpoint is refused whatever its signature), whether it carries an encrypted
 * assertion (which then must be signed inside), and the SHA-1 algorithms its signatures name.
 */
async function responseShape(
  samlResponse: string,
): Promise<{ destination?: string; encrypted: boolean; sha1: string[] }> {
  const { DOMParser } = await import('@xmldom/xmldom');
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  let root: Element | null;
  try {
    root = new DOMParser({ errorHandler: () => undefined }).parseFromString(xml, 'text/xml').documentElement;
  } catch {
    // Not XML at all: the library refuses it with its own reason.
    return { encrypted: false, sha1: [] };
  }
  const sha1 = root ? sha1Algorithms(root) : [];
  if (root?.localName !== 'Response') return { encrypted: false, sha1 };
  let encrypted = false;
  for (let child = root.firstChild; child; child = child.nextSibling) {
    if ((child as Element).localName === 'EncryptedAssertion') encrypted = true;
  }
  const destination = root.hasAttribute('Destination') ? root.getAttribute('Destination') : null;
  return { ...(destination !== null && { destination }), encrypted, sha1 };
}
