// A real SAML identity provider for the tests: samlify (npm) plays the provider's side. It reads the service's
// metadata, checks the signed requests, answers with signed (and encrypted) assertions, and sends and answers
// single-logout messages, as an enterprise provider does. Its key is the test-only provider key of test/fixtures/saml.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as samlify from 'samlify';
import { validateXML } from 'xmllint-wasm';
import { IDP_CERT_PATH, IDP_ENTITY_ID, IDP_SSO_URL, SAML_ENV } from './saml-idp.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'saml');
const schemas = join(fixtures, 'xsd');

export const IDP_SLO_URL = 'https://idp.test/slo';
export const SP_KEY_PATH = join(fixtures, 'sp-key.pem');
export const SP_CERT_PATH = join(fixtures, 'sp-cert.pem');
export const SP_NEXT_KEY_PATH = join(fixtures, 'sp-next-key.pem');
export const SP_NEXT_CERT_PATH = join(fixtures, 'sp-next-cert.pem');

/** `saml` mode with this service's own key pair and the provider's logout service. */
export const SAML_KEYED_ENV: Record<string, string> = {
  ...SAML_ENV,
  EAS_SAML_SP_KEY: SP_KEY_PATH,
  EAS_SAML_SP_CERT: SP_CERT_PATH,
  EAS_SAML_IDP_SLO_URL: IDP_SLO_URL,
};

const XSD = (name: string) => ({ fileName: name, contents: readFileSync(join(schemas, name), 'utf8') });
const DEPENDENCIES = [
  'saml-schema-assertion-2.0.xsd',
  'xmldsig-core-schema.xsd',
  'xenc-schema.xsd',
  'xml.xsd',
];

/** The schema errors of a document against a vendored SAML schema (empty: valid), offline (libxml2 in WebAssembly). */
export async function schemaErrors(xml: string, schema: string): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: 'document.xml', contents: xml }],
    schema: [XSD(schema)],
    preload: DEPENDENCIES.filter((name) => name !== schema).map(XSD),
  });
  return result.errors.map((error) => error.rawMessage);
}

// The provider refuses any message of the service that is not valid against the SAML protocol schema.
samlify.setSchemaValidator({
  validate: async (xml: string) => {
    const problems = await schemaErrors(xml, 'saml-schema-protocol-2.0.xsd');
    if (problems.length > 0) throw new Error(`schema: ${problems.join('; ')}`);
    return 'valid';
  },
});

const idpKey = readFileSync(join(fixtures, 'idp-key.pem'), 'utf8');
const idpCert = readFileSync(IDP_CERT_PATH, 'utf8');
const BINDING = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
};

export interface TestProvider {
  idp: samlify.IdentityProviderInstance;
  sp: samlify.ServiceProviderInstance;
}

/** The provider, with the service registered from its metadata document (as identity teams do). */
export function testProvider(
  spMetadata: string,
  options: { encrypt?: boolean; sha1?: boolean } = {},
): TestProvider {
  const idp = samlify.IdentityProvider({
    entityID: IDP_ENTITY_ID,
    privateKey: idpKey,
    signingCert: idpCert,
    isAssertionEncrypted: options.encrypt ?? true,
    wantAuthnRequestsSigned: true,
    wantLogoutRequestSigned: true,
    wantLogoutResponseSigned: true,
    requestSignatureAlgorithm: options.sha1
      ? 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'
      : 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified'],
    singleSignOnService: [{ Binding: BINDING.redirect, Location: IDP_SSO_URL }],
    singleLogoutService: [{ Binding: BINDING.redirect, Location: IDP_SLO_URL }],
  });
  // The service wants the provider's logout messages signed (it refuses them otherwise).
  const sp = samlify.ServiceProvider({
    metadata: spMetadata,
    wantLogoutRequestSigned: true,
    wantLogoutResponseSigned: true,
  });
  return { idp, sp };
}

/**
 * samlify's template with its `{Tag}` placeholders filled (the values here need no escaping); an element holding
 * only a tag without a value is left out, as samlify does (the SessionIndex of a logout for every session).
 */
function fillTags(template: string, values: Record<string, string | undefined>): string {
  return template
    .replace(/<([\w:]+)>\{(\w+)\}<\/\1>/g, (element, _tag, name: string) =>
      values[name] === undefined ? '' : element,
    )
    .replace(/\{(\w+)\}/g, (_placeholder, name: string) => values[name] ?? '');
}

/**
 * The provider's LogoutRequest for `nameId` by the HTTP-Redirect binding (signed): the URL the browser is sent to.
 * `issued`: its IssueInstant (default now); `notOnOrAfter`: added when given (samlify sends none by default).
 */
export function logoutRequestUrl(
  provider: TestProvider,
  nameId: string,
  times: { issued?: Date; notOnOrAfter?: Date } = {},
): URL {
  // samlify passes the tags it would fill in as a second argument, which its typings omit.
  const replacement = (template: string, tags: Record<string, string | undefined>) => {
    const issued = (times.issued ?? new Date()).toISOString();
    let context = fillTags(template, { ...tags, IssueInstant: issued });
    if (times.notOnOrAfter) {
      const notOnOrAfter = times.notOnOrAfter.toISOString();
      context = context.replace(/<samlp:LogoutRequest\b/, `$& NotOnOrAfter="${notOnOrAfter}"`);
    }
    return { id: tags.ID!, context };
  };
  const request = provider.idp.createLogoutRequest(
    provider.sp,
    'redirect',
    { logoutNameID: nameId },
    { customTagReplacement: replacement as (template: string) => { id: string; context: string } },
  );
  return new URL(request.context);
}

/** A redirect-binding message as samlify reads it: the query, and the signed part exactly as sent. */
export function redirectRequest(location: string): { query: Record<string, string>; octetString: string } {
  const url = new URL(location);
  const raw = url.search.slice(1);
  const octetString = raw
    .split('&')
    .filter((part) => !part.startsWith('Signature='))
    .join('&');
  return { query: Object.fromEntries(url.searchParams), octetString };
}

export interface LoginAnswer {
  /** The base64 `SAMLResponse` to post to the ACS. */
  response: string;
  sessionIndex: string;
}

/**
 * The provider's answer to an authentication request the service redirected to it: the request is parsed and its
 * signature checked by samlify (it throws otherwise), the response signed, and (by default) its assertion encrypted.
 * `change` edits the XML before the provider signs it.
 */
export async function answerLogin(
  provider: TestProvider,
  location: string,
  nameId: string,
  change: (xml: string) => string = (xml) => xml,
): Promise<LoginAnswer> {
  const parsed = await provider.idp.parseLoginRequest(provider.sp, 'redirect', redirectRequest(location));
  const requestId = String((parsed.extract as { request: { id: string } }).request.id);
  return respond(provider, { extract: parsed.extract }, requestId, nameId, change);
}

/** A response the provider sends unasked (sign-in started at its portal): no InResponseTo anywhere. */
export function answerUnsolicited(provider: TestProvider, nameId: string): Promise<LoginAnswer> {
  return respond(provider, { extract: {} }, undefined, nameId, (xml) => xml.replace(/ InResponseTo=""/g, ''));
}

async function respond(
  provider: TestProvider,
  requestInfo: { extract: unknown },
  requestId: string | undefined,
  nameId: string,
  change: (xml: string) => string,
): Promise<LoginAnswer> {
  const { idp, sp } = provider;
  const sessionIndex = `_s${randomBytes(8).toString('hex')}`;
  const acs = `${SAML_ENV.EAS_PUBLIC_URL}/maximo/saml/acs`;
  const answer = await idp.createLoginResponse(
    sp,
    requestInfo as Parameters<typeof idp.createLoginResponse>[1],
    'post',
    { email: nameId },
    {
      customTagReplacement: (template: string) => {
        const id = `_r${randomBytes(16).toString('hex')}`;
        const now = new Date();
        const later = new Date(now.getTime() + 5 * 60_000).toISOString();
        const values: Record<string, string> = {
          ID: id,
          AssertionID: `_a${randomBytes(16).toString('hex')}`,
          Destination: acs,
          Audience: `${SAML_ENV.EAS_PUBLIC_URL}/maximo/saml/metadata`,
          SubjectRecipient: acs,
          Issuer: IDP_ENTITY_ID,
          IssueInstant: now.toISOString(),
          StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
          ConditionsNotBefore: now.toISOString(),
          ConditionsNotOnOrAfter: later,
          SubjectConfirmationDataNotOnOrAfter: later,
          NameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
          NameID: nameId,
          InResponseTo: requestId ?? '',
          AuthnStatement: `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${sessionIndex}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
          AttributeStatement: '',
        };
        const context = change(template.replace(/\{(\w+)\}/g, (_match, name: string) => values[name] ?? ''));
        return { id, context };
      },
    },
  );
  return { response: answer.context, sessionIndex };
}

/** Edits a response after the provider signed it: what an attacker holding a valid response can do. */
export function afterSigning(response: string, edit: (xml: string) => string): string {
  return Buffer.from(edit(Buffer.from(response, 'base64').toString('utf8'))).toString('base64');
}
