// Single logout with the identity provider (docs/federated-login.md, "Single logout"), on the library's logout
// messages: a logout here sends the provider a LogoutRequest naming the session it opened; a LogoutRequest from the
// provider names the sessions to end and is answered with a LogoutResponse. Every message this service sends is
// signed (with a key pair configured) and goes by the HTTP-Redirect binding; the provider's may come by redirect or
// POST, and must be signed by one of its certificates.
import { inflateRawSync } from 'node:zlib';
import type { Profile } from '@node-saml/node-saml';
import { errors } from '../../errors.js';
import type { ProviderSession } from '../federated/provider-sessions.js';
import { isSha1, sha1AlgorithmsOf } from './algorithms.js';
import type { SamlService } from './service.js';

const LOGOUT = { decryptionKey: 0, encrypted: false, logout: true };

/** A logout message the provider sent, verified. */
export type LogoutMessage =
  | {
      kind: 'request';
      /** The NameID whose sessions end, and the provider's session among them when named. */
      subject: string;
      providerSession: string | undefined;
      /** Where to send the browser with the signed answer. */
      answer: (relayState: string | undefined) => Promise<string>;
    }
  | { kind: 'response' };

/** The provider's single logout URL with a signed LogoutRequest for `provider`'s session; undefined without one. */
export async function logoutRequestUrl(
  service: SamlService,
  provider: ProviderSession,
  relayState: string,
): Promise<string | undefined> {
  if (service.config.idpSloUrl === undefined) return undefined;
  const saml = await service.library(LOGOUT);
  const user: Profile = {
    issuer: service.config.idpEntityId ?? '',
    nameID: provider.subject,
    nameIDFormat: provider.subjectFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
    ...(provider.providerSession !== undefined && { sessionIndex: provider.providerSession }),
  };
  return saml.getLogoutUrlAsync(user, relayState, {});
}

/**
 * A message of the HTTP-Redirect binding: `query` parsed, `rawQuery` as sent (the signature covers its encoding).
 * The library accepts an unsigned redirect; this service does not, or anyone could end anyone's sessions.
 */
export async function acceptLogoutRedirect(
  service: SamlService,
  query: Record<string, string | undefined>,
  rawQuery: string,
): Promise<LogoutMessage> {
  if (query.SAMLRequest === undefined && query.SAMLResponse === undefined) {
    throw refused(service, 'it carries no SAMLRequest or SAMLResponse', 'no message');
  }
  if (query.Signature === undefined || query.SigAlg === undefined) {
    throw refused(service, 'it is not signed by the identity provider', 'unsigned redirect');
  }
  if (isSha1(query.SigAlg) && !service.allowsSha1) {
    throw refused(service, 'it is signed with SHA-1, which is not accepted', `SigAlg ${query.SigAlg}`);
  }
  const saml = await service.library(LOGOUT);
  const container = Object.fromEntries(
    Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return verified(
    service,
    () => saml.validateRedirectAsync(container, rawQuery),
    () => inflated(query.SAMLRequest),
  );
}

/** The XML of an HTTP-Redirect message (base64 of DEFLATE); empty when it is not one (the library refused it). */
function inflated(message: string | undefined): string {
  if (message === undefined) return '';
  try {
    return inflateRawSync(Buffer.from(message, 'base64')).toString('utf8');
  } catch {
    return '';
  }
}

/** A message of the HTTP-POST binding: the XML signature of the whole message is required. */
export async function acceptLogoutPost(
  service: SamlService,
  body: { SAMLRequest?: string | undefined; SAMLResponse?: string | undefined },
): Promise<LogoutMessage> {
  const saml = await service.library(LOGOUT);
  const message = body.SAMLRequest ?? body.SAMLResponse;
  if (message !== undefined && !service.allowsSha1) {
    const sha1 = await sha1AlgorithmsOf(Buffer.from(message, 'base64').toString('utf8'));
    if (sha1.length > 0) {
      throw refused(service, 'it is signed with SHA-1, which is not accepted', `SHA-1: ${sha1.join(', ')}`);
    }
  }
  if (body.SAMLRequest !== undefined) {
    const request = body.SAMLRequest;
    return verified(
      service,
      () => saml.validatePostRequestAsync({ SAMLRequest: request }),
      () => Buffer.from(request, 'base64').toString('utf8'),
    );
  }
  if (body.SAMLResponse !== undefined) {
    const response = body.SAMLResponse;
    return verified(
      service,
      () => saml.validatePostResponseAsync({ SAMLResponse: response }),
      () => '',
    );
  }
  throw refused(service, 'it carries no SAMLRequest or SAMLResponse', 'no message');
}

/**
 * The library's verification, then what it leaves out for a LogoutRequest: its times and its single use
 * (SamlService.spendLogoutRequest). `xml`: the message's XML, read once its signature has been verified.
 */
async function verified(
  service: SamlService,
  validate: () => Promise<{ profile: Profile | null; loggedOut: boolean }>,
  xml: () => string,
): Promise<LogoutMessage> {
  let result: { profile: Profile | null; loggedOut: boolean };
  try {
    result = await validate();
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw refused(service, logoutReasonOf(detail), detail);
  }
  const { profile } = result;
  if (!result.loggedOut) throw refused(service, 'it is no logout message', 'not a logout');
  if (profile === null) return { kind: 'response' };
  const issuer = service.config.idpEntityId;
  if (issuer !== undefined && profile.issuer !== issuer) {
    throw refused(service, 'it comes from another identity provider', `Issuer ${profile.issuer}`);
  }
  const times = await issueTimes(xml());
  const refusal = await service.spendLogoutRequest({
    id: typeof profile.ID === 'string' ? profile.ID : '',
    issuer: profile.issuer ?? '',
    ...times,
  });
  if (refusal !== undefined)
    throw refused(service, refusal, `LogoutRequest ${String(profile.ID)}: ${refusal}`);
  const saml = await service.library(LOGOUT);
  return {
    kind: 'request',
    subject: profile.nameID,
    providerSession: profile.sessionIndex,
    answer: (relayState) => saml.getLogoutResponseUrlAsync(profile, relayState ?? '', {}, true),
  };
}

/** The root element's IssueInstant and NotOnOrAfter: the library checks NotOnOrAfter only when present. */
async function issueTimes(xml: string): Promise<{ issueInstant?: string; notOnOrAfter?: string }> {
  const { DOMParser } = await import('@xmldom/xmldom');
  let root: Element | null;
  try {
    root = new DOMParser({ errorHandler: () => undefined }).parseFromString(xml, 'text/xml').documentElement;
  } catch {
    return {};
  }
  if (root?.localName !== 'LogoutRequest') return {};
  return {
    ...(root.hasAttribute('IssueInstant') && { issueInstant: root.getAttribute('IssueInstant')! }),
    ...(root.hasAttribute('NotOnOrAfter') && { notOnOrAfter: root.getAttribute('NotOnOrAfter')! }),
  };
}

function logoutReasonOf(detail: string): string {
  if (/signature/i.test(detail)) return 'it is not signed by a certificate of the identity provider';
  if (/issuer/i.test(detail)) return 'it comes from another identity provider';
  if (/expired|not yet valid|NotBefore|NotOnOrAfter/i.test(detail))
    return 'it has expired or is not valid yet';
  if (/InResponseTo/i.test(detail)) return 'it answers no logout request of this service';
  if (/status/i.test(detail)) return 'the identity provider reports a failure';
  return 'it is not a valid SAML logout message';
}

function refused(service: SamlService, reason: string, detail: string) {
  service.logRefusal(`logout: ${detail}`);
  return errors.samlLogoutRefused(reason);
}
