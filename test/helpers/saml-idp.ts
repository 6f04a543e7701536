// A stand-in SAML identity provider for tests: it reads the service's authentication request and writes responses
// signed with the test-only key of test/fixtures/saml (never a real provider's).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'saml');

/** The test provider's certificate file (EAS_SAML_IDP_CERT) and the keys that sign. */
export const IDP_CERT_PATH = join(fixtures, 'idp-cert.pem');
const keys = {
  idp: { key: readFileSync(join(fixtures, 'idp-key.pem')), cert: readFileSync(IDP_CERT_PATH) },
  other: {
    key: readFileSync(join(fixtures, 'other-idp-key.pem')),
    cert: readFileSync(join(fixtures, 'other-idp-cert.pem')),
  },
};

export const IDP_ENTITY_ID = 'https://idp.test/saml';
export const IDP_SSO_URL = 'https://idp.test/sso';
export const SP_PUBLIC_URL = 'https://eas.test';
export const SP_ENTITY_ID = `${SP_PUBLIC_URL}/maximo/saml/metadata`;
export const ACS_URL = `${SP_PUBLIC_URL}/maximo/saml/acs`;

/**
 * The settings of `saml` mode against this provider (entity id and ACS derived from EAS_PUBLIC_URL). The tests sign
 * in many times a minute from one address: the per-address bound on starts is raised for them, and tested with its
 * default where it is the subject.
 */
export const SAML_ENV: Record<string, string> = {
  EAS_AUTH_MODE: 'saml',
  EAS_PUBLIC_URL: SP_PUBLIC_URL,
  EAS_SAML_IDP_SSO_URL: IDP_SSO_URL,
  EAS_SAML_IDP_CERT: IDP_CERT_PATH,
  EAS_SAML_IDP_ENTITY_ID: IDP_ENTITY_ID,
  EAS_FEDERATED_STARTS_PER_MINUTE: '100000',
};

/** The `ID` of the authentication request in a redirect to the provider (HTTP-Redirect binding: deflated, base64). */
export function requestIdOfRedirect(location: string): string {
  const request = new URL(location).searchParams.get('SAMLRequest');
  if (!request) throw new Error(`no SAMLRequest in ${location}`);
  return requestIdOf(inflateRawSync(Buffer.from(request, 'base64')).toString('utf8'));
}

export function requestIdOf(requestXml: string): string {
  const id = /<samlp:AuthnRequest\b[^>]*\sID="([^"]+)"/.exec(requestXml)?.[1];
  if (!id) throw new Error(`no request ID in ${requestXml}`);
  return id;
}

export interface ResponseOptions {
  /** The request answered (InResponseTo); omitted: an unsolicited response. */
  requestId?: string;
  nameId?: string;
  attributes?: Record<string, string>;
  audience?: string;
  recipient?: string;
  destination?: string | null;
  issuer?: string;
  /** Validity of the conditions and of the subject confirmation: from `notBefore` to `notOnOrAfter`. */
  notBefore?: Date;
  notOnOrAfter?: Date;
  assertionId?: string;
  /** What carries the signature. */
  sign?: 'assertion' | 'response' | 'none';
  /** Whose key signs: the configured provider's, or another. */
  key?: 'idp' | 'other';
  /** The signature and digest algorithms: SHA-256 as providers use today, or SHA-1. */
  algorithm?: 'sha256' | 'sha1';
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

/** A `samlp:Response` as a provider posts it: the base64 of the XML. */
export function samlResponse(options: ResponseOptions = {}): string {
  const now = Date.now();
  const issued = new Date(now).toISOString();
  const notBefore = (options.notBefore ?? new Date(now - 60_000)).toISOString();
  const notOnOrAfter = (options.notOnOrAfter ?? new Date(now + 5 * 60_000)).toISOString();
  const assertionId = options.assertionId ?? `_a${randomBytes(16).toString('hex')}`;
  const responseId = `_r${randomBytes(16).toString('hex')}`;
  const issuer = escape(options.issuer ?? IDP_ENTITY_ID);
  const inResponseTo = options.requestId === undefined ? '' : ` InResponseTo="${escape(options.requestId)}"`;
  const destination =
    options.destination === null ? '' : ` Destination="${escape(options.destination ?? ACS_URL)}"`;
  const attributes = Object.entries(options.attributes ?? {})
    .map(
      ([name, value]) =>
        `<saml:Attribute Name="${escape(name)}"><saml:AttributeValue>${escape(value)}</saml:AttributeValue></saml:Attribute>`,
    )
    .join('');
  const assertion =
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${issued}">` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified">${escape(options.nameId ?? 'wilson')}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData${inResponseTo} Recipient="${escape(options.recipient ?? ACS_URL)}" NotOnOrAfter="${notOnOrAfter}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${escape(options.audience ?? SP_ENTITY_ID)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${issued}" SessionIndex="${assertionId}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    (attributes === '' ? '' : `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`) +
    `</saml:Assertion>`;
  let xml =
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${responseId}" Version="2.0" IssueInstant="${issued}"${destination}${inResponseTo}>` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    assertion +
    `</samlp:Response>`;
  const sign = options.sign ?? 'assertion';
  if (sign !== 'none') xml = signed(xml, sign, keys[options.key ?? 'idp'], options.algorithm ?? 'sha256');
  return Buffer.from(xml).toString('base64');
}

/** The identifiers of the signature method and digest of each algorithm. */
const ALGORITHMS = {
  sha256: {
    signature: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    digest: 'http://www.w3.org/2001/04/xmlenc#sha256',
  },
  sha1: {
    signature: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
    digest: 'http://www.w3.org/2000/09/xmldsig#sha1',
  },
};

/** Signs the assertion or the whole response (enveloped, exclusive c14n, RSA-SHA256 by default), as providers do. */
function signed(
  xml: string,
  what: 'assertion' | 'response',
  signer: { key: Buffer; cert: Buffer },
  algorithm: keyof typeof ALGORITHMS,
): string {
  const element = what === 'assertion' ? 'Assertion' : 'Response';
  const signature = new SignedXml({
    privateKey: signer.key,
    publicCert: signer.cert,
    signatureAlgorithm: ALGORITHMS[algorithm].signature,
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signature.addReference({
    xpath: `//*[local-name(.)='${element}']`,
    transforms: [
      'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
      'http://www.w3.org/2001/10/xml-exc-c14n#',
    ],
    digestAlgorithm: ALGORITHMS[algorithm].digest,
  });
  signature.computeSignature(xml, {
    prefix: 'ds',
    location: { reference: `//*[local-name(.)='${element}']/*[local-name(.)='Issuer']`, action: 'after' },
  });
  return signature.getSignedXml();
}

/** Replaces text in a response after it was signed (a forgery the signature must reveal). */
export function tampered(response: string, from: string, to: string): string {
  return Buffer.from(Buffer.from(response, 'base64').toString('utf8').replace(from, to)).toString('base64');
}
