import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  SAML_KEYED_ENV,
  afterSigning,
  answerLogin,
  answerUnsolicited,
  testProvider,
  type TestProvider,
} from '../../../test/helpers/samlify-idp.js';

/**
 * Known attacks on SAML service providers, each built from a response the real provider (samlify) signed
 * (docs/federated-login.md, "What the service checks"): every one is refused with its documented reason code and
 * opens no session.
 */

function assertRefused(response: LightMyRequestResponse, reasonCode: string, text?: RegExp): void {
  assert.equal(response.statusCode, 401, response.body);
  assert.equal(json(response).Error?.reasonCode, reasonCode, response.body);
  if (text) assert.match(String(json(response).Error?.message), text);
  assert.equal(response.headers['set-cookie'], undefined, 'a refused response opens no session');
}

/** The signed assertion of a response (samlify signs the assertion, as the metadata asks). */
function assertionOf(xml: string): string {
  const assertion = /<saml:Assertion\b[\s\S]*<\/saml:Assertion>/.exec(xml)?.[0];
  assert.ok(assertion, 'an assertion in the response');
  return assertion;
}

/** The same assertion, unsigned, naming another user under another id: what the attacker wants read. */
function evilTwin(assertion: string, id?: string): string {
  const unsigned = assertion.replace(/<ds:Signature\b[\s\S]*<\/ds:Signature>/, '');
  const renamed = unsigned.replace(/>wilson</, '>maxadmin<');
  return id === undefined ? renamed : renamed.replace(/ ID="[^"]+"/, ` ID="${id}"`);
}

describe('SAML attack shapes against a response signed by the real provider', () => {
  let t: TestApp;
  let plain: TestProvider;
  let encrypting: TestProvider;

  before(async () => {
    t = await startTestApp(SAML_KEYED_ENV);
    const metadata = (await t.app.inject({ url: '/maximo/saml/metadata' })).body;
    plain = testProvider(metadata, { encrypt: false });
    encrypting = testProvider(metadata);
  });
  after(() => t.close());

  async function started(): Promise<{ location: string; cookie: string }> {
    const response = await t.app.inject({ url: '/maximo/saml/login' });
    const set = [response.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('EAS_SAML_REQUESTS='));
    return { location: String(response.headers.location), cookie: set!.split(';')[0]! };
  }

  function post(response: string, cookie: string) {
    return t.app.inject({
      method: 'POST',
      url: '/maximo/saml/acs',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({ SAMLResponse: response }).toString(),
    });
  }

  /** A response for wilson, edited after signing by `edit`, posted by the browser that started the sign-in. */
  async function forged(edit: (xml: string) => string, provider = plain) {
    const start = await started();
    const answer = await answerLogin(provider, start.location, 'wilson');
    return post(afterSigning(answer.response, edit), start.cookie);
  }

  test('the unedited response signs in (the attacks below start from it)', async () => {
    const response = await forged((xml) => xml);
    assert.equal(response.statusCode, 302, response.body);
  });

  test('wrapping: an unsigned assertion placed before the signed one', async () => {
    const response = await forged((xml) => {
      const assertion = assertionOf(xml);
      return xml.replace(assertion, evilTwin(assertion, '_evil') + assertion);
    });
    assertRefused(response, 'EAS0150E', /not signed/);
  });

  test('wrapping: the signed assertion moved into Extensions, an unsigned one with its ID in its place', async () => {
    const response = await forged((xml) => {
      const assertion = assertionOf(xml);
      const id = / ID="([^"]+)"/.exec(assertion)![1]!;
      return xml
        .replace(assertion, evilTwin(assertion, id))
        .replace('<samlp:Status>', `<samlp:Extensions>${assertion}</samlp:Extensions><samlp:Status>`);
    });
    assertRefused(response, 'EAS0150E', /not signed/);
  });

  test('wrapping: the signed assertion nested inside an unsigned one', async () => {
    const response = await forged((xml) => {
      const assertion = assertionOf(xml);
      const evil = evilTwin(assertion, '_evil');
      return xml.replace(assertion, evil.replace('</saml:Assertion>', `${assertion}</saml:Assertion>`));
    });
    assertRefused(response, 'EAS0150E', /not signed/);
  });

  test('wrapping: the signature copied into an unsigned assertion, the signed one hidden in its Object', async () => {
    const response = await forged((xml) => {
      const assertion = assertionOf(xml);
      const signature = /<ds:Signature\b[\s\S]*<\/ds:Signature>/.exec(assertion)![0];
      const id = / ID="([^"]+)"/.exec(assertion)![1]!;
      const hidden = signature.replace(
        '</ds:Signature>',
        `<ds:Object>${assertion}</ds:Object></ds:Signature>`,
      );
      const evil = evilTwin(assertion, id).replace(/(<saml:Issuer>[^<]*<\/saml:Issuer>)/, `$1${hidden}`);
      return xml.replace(assertion, evil);
    });
    assertRefused(response, 'EAS0150E', /not signed/);
  });

  test('comment injection: a comment in the signed NameID does not cut the user id short', async () => {
    // The provider signed `maxadmin.evil` (an account the attacker holds); canonical XML drops comments, so the
    // signature still holds once a comment splits the text. Reading the first text node would sign in MAXADMIN.
    const start = await started();
    const answer = await answerLogin(plain, start.location, 'maxadmin.evil');
    const response = await post(
      afterSigning(answer.response, (xml) => xml.replace('>maxadmin.evil<', '>maxadmin<!---->.evil<')),
      start.cookie,
    );
    assertRefused(response, 'EAS0191E', /MAXADMIN\.EVIL|maxadmin\.evil/);
  });

  test('an encrypted assertion that is not signed inside is refused', async () => {
    const metadata = (await t.app.inject({ url: '/maximo/saml/metadata' })).body;
    const unsignedInside = testProvider(
      metadata.replace('WantAssertionsSigned="true"', 'WantAssertionsSigned="false"'),
    );
    const start = await started();
    const answer = await answerLogin(unsignedInside, start.location, 'wilson');
    assertRefused(await post(answer.response, start.cookie), 'EAS0150E', /not signed/);
  });

  test('replay: the same encrypted response a second time', async () => {
    const start = await started();
    const answer = await answerLogin(encrypting, start.location, 'wilson');
    const first = await post(answer.response, start.cookie);
    assert.equal(first.statusCode, 302, first.body);
    assertRefused(await post(answer.response, start.cookie), 'EAS0151E');
  });

  test('wrong audience', async () => {
    const start = await started();
    const answer = await answerLogin(encrypting, start.location, 'wilson', (xml) =>
      xml.replace(/<saml:Audience>[^<]*</, '<saml:Audience>https://other-sp.test/saml<'),
    );
    assertRefused(await post(answer.response, start.cookie), 'EAS0150E', /audience/);
  });

  test('expired', async () => {
    const start = await started();
    const past = new Date(Date.now() - 3_600_000).toISOString();
    const answer = await answerLogin(encrypting, start.location, 'wilson', (xml) =>
      xml
        .replace(/NotOnOrAfter="[^"]+"/g, `NotOnOrAfter="${past}"`)
        .replace(/NotBefore="[^"]+"/g, `NotBefore="${past}"`),
    );
    assertRefused(await post(answer.response, start.cookie), 'EAS0150E', /expired/);
  });

  test('an unsolicited (IdP-initiated) response is refused while EAS_SAML_ALLOW_IDP_INITIATED is off', async () => {
    const answer = await answerUnsolicited(encrypting, 'wilson');
    assertRefused(await post(answer.response, ''), 'EAS0150E', /answers no sign-in request/);
  });
});

describe('IdP-initiated sign-in (EAS_SAML_ALLOW_IDP_INITIATED=1)', () => {
  let t: TestApp;
  let provider: TestProvider;

  before(async () => {
    t = await startTestApp({ ...SAML_KEYED_ENV, EAS_SAML_ALLOW_IDP_INITIATED: '1' });
    provider = testProvider((await t.app.inject({ url: '/maximo/saml/metadata' })).body);
  });
  after(() => t.close());

  function post(response: string, relayState?: string) {
    const form = new URLSearchParams({ SAMLResponse: response });
    if (relayState !== undefined) form.set('RelayState', relayState);
    return t.app.inject({
      method: 'POST',
      url: '/maximo/saml/acs',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form.toString(),
    });
  }

  test('a response from the provider portal signs in once; its replay is refused', async () => {
    const answer = await answerUnsolicited(provider, 'wilson');
    const signedIn = await post(answer.response, 'https://evil.example/');
    assert.equal(signedIn.statusCode, 302, signedIn.body);
    assert.equal(signedIn.headers.location, '/maximo/signin', 'a foreign RelayState is not followed');
    assertRefused(await post(answer.response), 'EAS0151E');
  });

  test('the other checks still apply: an unsolicited response whose assertion lost its signature is refused', async () => {
    const answer = await answerUnsolicited(provider, 'wilson');
    const unsigned = afterSigning(answer.response, (xml) =>
      xml.replace('<saml:EncryptedAssertion', '<saml:Bogus'),
    );
    assertRefused(await post(unsigned), 'EAS0150E');
  });
});
