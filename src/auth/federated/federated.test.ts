import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../config.js';
import { isMaximoError } from '../../errors.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  HOSTILE_RETURN_ADDRESSES,
  REVIEWED_RETURN_ADDRESSES,
} from '../../../test/helpers/return-addresses.js';
import { sameOriginTarget } from './return-to.js';
import { SealedState } from './sealed-state.js';
import { FederatedUsers } from './service.js';

describe('return-to check', () => {
  const policy = { origins: ['https://eas.example.org'], fallback: '/maximo/signin' };

  test('keeps paths and URLs of the service origin', () => {
    assert.equal(sameOriginTarget('/maximo/oslc/whoami?lean=1#x', policy), '/maximo/oslc/whoami?lean=1#x');
    assert.equal(sameOriginTarget('https://eas.example.org/maximo/signin?a=1', policy), '/maximo/signin?a=1');
  });

  test('falls back for other origins, protocol-relative and disguised targets', () => {
    for (const target of [
      'https://evil.example/maximo',
      'http://eas.example.org/maximo',
      '//evil.example/x',
      '/\\evil.example/x',
      '\\\\evil.example',
      '/\t/evil.example',
      'javascript:alert(1)',
      'https://user@eas.example.org/maximo',
      '',
      undefined,
      42,
    ]) {
      assert.equal(sameOriginTarget(target, policy), '/maximo/signin', String(target));
    }
  });

  test('falls back for every spelling that normalises to, or reads as, another host', () => {
    for (const target of [...HOSTILE_RETURN_ADDRESSES, '/@evil.com', 'http:evil.com']) {
      const sent = sameOriginTarget(target, policy);
      assert.ok(
        sent === '/maximo/signin' || /^\/[^/\\]/.test(sent),
        `${JSON.stringify(target)} gave ${sent}`,
      );
      // Whatever path is kept, a browser resolves it on this host.
      assert.equal(new URL(sent, 'https://eas.example.org').host, 'eas.example.org', target);
    }
    for (const target of [...REVIEWED_RETURN_ADDRESSES, '/%2fevil.com', '/%5cevil.com']) {
      assert.equal(sameOriginTarget(target, policy), '/maximo/signin', target);
    }
    // `@` in a path is only a path: it stays on this host.
    assert.equal(sameOriginTarget('/@evil.com', policy), '/@evil.com');
  });

  test('what it answers is its own fixed point: checked again at the callback, it is unchanged', () => {
    for (const target of [
      '/maximo/oslc/whoami?lean=1#x',
      '/maximo/a%20b?q=%2F',
      ...HOSTILE_RETURN_ADDRESSES,
    ]) {
      const sent = sameOriginTarget(target, policy);
      assert.equal(sameOriginTarget(sent, policy), sent, target);
    }
  });

  test('no input yields an address that is not a single slash and a path (property)', () => {
    const piece = fc.constantFrom(
      '/',
      '//',
      '\\',
      '.',
      '..',
      '%2e',
      '%2E',
      '%2f',
      '%2F',
      '%5c',
      '%5C',
      '@',
      ':',
      '?',
      '#',
      '\t',
      '\n',
      '\r',
      ' ',
      'evil.com',
      'eas.example.org',
      'https:',
      'http:',
      'javascript:',
      'maximo',
      '%',
      '%00',
      '\u3002',
      '\uff0f',
    );
    const target = fc.oneof(
      fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join('')),
      fc.string({ maxLength: 40 }),
      fc.webUrl(),
    );
    fc.assert(
      fc.property(target, (asked) => {
        const sent = sameOriginTarget(asked, policy);
        return (
          (sent === '/' || /^\/[^/\\]/.test(sent)) &&
          new URL(sent, 'https://eas.example.org').host === 'eas.example.org'
        );
      }),
      { numRuns: 5000 },
    );
  });
});

describe('sealed state', () => {
  const key = randomBytes(32);

  test('opens what it sealed, until it expires', () => {
    let now = 1_000_000;
    const state = new SealedState<{ nonce: string }>(key, 'test', () => now);
    const token = state.seal({ nonce: 'n1' }, 60);
    assert.deepEqual(state.open(token), { nonce: 'n1' });
    now += 61_000;
    assert.equal(state.open(token), undefined);
  });

  test('refuses altered tokens, other keys and other purposes', () => {
    const state = new SealedState<string>(key, 'test');
    const token = state.seal('value', 60);
    const altered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    assert.equal(state.open(altered), undefined);
    assert.equal(new SealedState<string>(randomBytes(32), 'test').open(token), undefined);
    assert.equal(new SealedState<string>(key, 'other').open(token), undefined);
    assert.equal(state.open('not a token!'), undefined);
    assert.equal(state.open(undefined), undefined);
  });
});

describe('mapping identity-provider users', () => {
  let eas: TestApp;
  before(async () => {
    eas = await startTestApp();
  });
  after(() => eas.close());

  const users = (createUsers: boolean, defaultGroup?: string) =>
    new FederatedUsers({
      db: eas.storage.db,
      bus: eas.storage.bus,
      settings: { createUsers, defaultGroup },
      logWarning: () => undefined,
    });

  const refusal = async (promise: Promise<unknown>): Promise<string> => {
    try {
      await promise;
    } catch (error) {
      if (isMaximoError(error)) return error.reasonCode;
      throw error;
    }
    return 'accepted';
  };

  test('a known user, in any case, by user id', async () => {
    assert.equal(await users(false).userFor({ scheme: 'OIDC', name: 'wilson' }), 'WILSON');
  });

  test('an unknown user is refused when creation is off', async () => {
    assert.equal(await refusal(users(false).userFor({ scheme: 'OIDC', name: 'newcomer' })), 'EAS0191E');
  });

  test('an unknown user is created in the default group when allowed, and signs in as that user', async () => {
    const created = await users(true, 'MAXADMIN').userFor({
      scheme: 'OIDC',
      name: 'newcomer',
      displayName: 'New Comer',
      email: 'new@example.org',
    });
    assert.equal(created, 'NEWCOMER');
    const profile = await eas.services.auth.profile('NEWCOMER');
    assert.deepEqual(profile?.groups, ['MAXADMIN']);
    assert.equal(profile?.displayname, 'New Comer');
    // Known now: found again, not created twice.
    assert.equal(await users(true, 'MAXADMIN').userFor({ scheme: 'OIDC', name: 'NewComer' }), 'NEWCOMER');
  });

  test('no user is created for a missing group or a name that is no user id', async () => {
    assert.equal(
      await refusal(users(true, 'NOSUCHGROUP').userFor({ scheme: 'SAML', name: 'other' })),
      'EAS0191E',
    );
    assert.equal(
      await refusal(users(true, 'MAXADMIN').userFor({ scheme: 'SAML', name: 'has space' })),
      'EAS0191E',
    );
    assert.equal(await eas.services.auth.profile('OTHER'), undefined);
  });

  test('an inactive user is refused', async () => {
    await eas.storage.db
      .updateTable('maxuser')
      .set({ status: 'INACTIVE' })
      .where('userid', '=', 'SMITH')
      .execute();
    assert.equal(
      await refusal(users(true, 'MAXADMIN').userFor({ scheme: 'OIDC', name: 'smith' })),
      'EAS0191E',
    );
  });
});

describe('federated settings', () => {
  const oidc = {
    EAS_AUTH_MODE: 'oidc',
    EAS_OIDC_ISSUER: 'https://login.example.org',
    EAS_OIDC_CLIENT_ID: 'eas',
    EAS_OIDC_REDIRECT_URL: 'https://eas.example.org/maximo/oidc/callback',
  };
  const refusedVariable = (env: Record<string, string>): string | undefined => {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.variable;
      throw error;
    }
    return undefined;
  };

  test('the oidc mode: /api takes API keys only, whatever EAS_API_KEY_ONLY says', () => {
    const config = loadConfig(oidc);
    assert.equal(config.apiKeys.apiRouteKeyOnly, true);
    assert.equal(config.oidc?.userClaim, 'preferred_username');
    assert.equal(refusedVariable({ ...oidc, EAS_API_KEY_ONLY: '0' }), 'EAS_API_KEY_ONLY');
  });

  test('required and checked settings', () => {
    assert.equal(refusedVariable({ ...oidc, EAS_OIDC_CLIENT_ID: '' }), 'EAS_OIDC_CLIENT_ID');
    assert.equal(
      refusedVariable({ ...oidc, EAS_OIDC_ISSUER: 'http://login.example.org' }),
      'EAS_OIDC_ISSUER',
    );
    assert.equal(refusedVariable({ ...oidc, EAS_OIDC_ISSUER: 'http://127.0.0.1:8080' }), undefined);
    assert.equal(
      refusedVariable({ ...oidc, EAS_OIDC_REDIRECT_URL: 'https://eas.example.org/elsewhere' }),
      'EAS_OIDC_REDIRECT_URL',
    );
    assert.equal(refusedVariable({ ...oidc, EAS_OIDC_SCOPES: 'profile email' }), 'EAS_OIDC_SCOPES');
    assert.equal(
      refusedVariable({ ...oidc, EAS_FEDERATED_CREATE_USERS: '1' }),
      'EAS_FEDERATED_DEFAULT_GROUP',
    );
  });
});
