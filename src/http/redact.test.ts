import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import type { Storage } from '../db/database.js';
import { json, maxauth, testConfig } from '../../test/helpers/app.js';
import { openTestStorage } from '../../test/helpers/storage.js';
import { isCredentialName, redactBody, redactForm, redactUrl } from './redact.js';

/** Every way a client may spell a credential's name: plain, each letter %-escaped (both cases), upper case. */
function spellings(name: string): string[] {
  const result = new Set([name, name.toUpperCase()]);
  for (let i = 0; i < name.length; i += 1) {
    const hex = name.charCodeAt(i).toString(16);
    for (const escape of [hex.toUpperCase(), hex.toLowerCase()]) {
      result.add(`${name.slice(0, i)}%${escape}${name.slice(i + 1)}`);
    }
  }
  return [...result];
}

const CREDENTIALS = ['apikey', 'maxauth', 'j_password', 'password'];

/**
 * Fifty ways to send a key under a name the service does not accept (`<key>` stands for the value): each request is
 * refused, and its log line must not hold the key (docs/security.md, "Credentials are not logged").
 */
const UNACCEPTED_SPELLINGS = [
  'apikey[]=<key>',
  'apikey%20=<key>',
  'apikey.=<key>',
  'apikey%00=<key>',
  'a=b;apikey=<key>',
  'x=<key>',
  'apikey[0]=<key>',
  'apikey%5B%5D=<key>',
  'apikey%09=<key>',
  '%20apikey=<key>',
  'apikey_=<key>',
  'apikey-=<key>',
  'api_key=<key>',
  'api-key=<key>',
  'apiKey2=<key>',
  'key=<key>',
  'token=<key>',
  'access_token=<key>',
  'auth=<key>',
  'secret=<key>',
  'apikey;=<key>',
  'apikey,=<key>',
  'apikey%3D=<key>',
  'apikey%26=<key>',
  'apikey:=<key>',
  'apikey/=<key>',
  'apikey%2F=<key>',
  'apikey%0A=<key>',
  'apikey%0D=<key>',
  'apikey%C2%A0=<key>',
  'ap%C4%B1key=<key>',
  'apikey%E2%80%8B=<key>',
  'apikeys=<key>',
  'xapikey=<key>',
  'apikey.x=<key>',
  'apikey[x]=<key>',
  'apikey{}=<key>',
  'apikey%7B%7D=<key>',
  'q=<key>',
  'id=<key>',
  'user=<key>',
  'v=prefix-<key>',
  'data=%22<key>%22',
  '<key>',
  '<key>=1',
  'x=1;y=<key>',
  'maxauth2=<key>',
  'password2=<key>',
  'oslc.unknown=<key>',
  'oslc.where=assetnum%3D%22<key>%22',
];
const SECRET = 'Sup3r-secret-value-that-must-not-be-logged';

describe('credential redaction by decoded name', () => {
  test('each encoded spelling of each credential name is redacted in query strings and form bodies', () => {
    for (const name of CREDENTIALS) {
      for (const spelling of spellings(name)) {
        assert.equal(isCredentialName(spelling), true, spelling);
        const url = redactUrl(`/maximo/oslc/os/mxapiasset?lean=1&${spelling}=${SECRET}&oslc.pageSize=1`);
        assert.equal(url, `/maximo/oslc/os/mxapiasset?lean=1&${spelling}=[redacted]&oslc.pageSize=1`);
        assert.equal(
          redactForm(`j_username=WILSON&${spelling}=${SECRET}`),
          `j_username=WILSON&${spelling}=[redacted]`,
        );
      }
      assert.deepEqual(redactBody({ j_username: 'WILSON', [name]: SECRET }), {
        j_username: 'WILSON',
        [name]: '[redacted]',
      });
    }
    assert.equal(isCredentialName('apikeys'), false);
    assert.equal(redactUrl('/maximo/oslc/os/mxapiasset'), '/maximo/oslc/os/mxapiasset');
  });

  describe('in the request log', () => {
    let storage: Storage;
    let app: FastifyInstance;
    const lines: string[] = [];
    before(async () => {
      storage = await openTestStorage();
      ({ app } = await buildApp(
        testConfig({ EAS_LOG_LEVEL: 'trace', EAS_MASTER_KEY: 'redaction-test-master-key-0123456789abcdef' }),
        storage,
        { write: (line) => void lines.push(line) },
      ));
      // A route that logs the text of its form body, as a diagnostic would.
      await app.register(async (scope) => {
        scope.addContentTypeParser(
          'application/x-www-form-urlencoded',
          { parseAs: 'string' },
          (_r, body, done) => done(null, body),
        );
        scope.post('/logs-body', { config: { access: { kind: 'public' } } }, (request, reply) => {
          assert.equal(typeof request.body, 'string');
          request.log.info({ body: request.body }, 'body received');
          return reply.send({});
        });
      });
      await app.ready();
    });
    after(async () => {
      await app.close();
      await storage.close();
    });

    test('a key sent as ?api%6Bey= is accepted as the deployed systems do, and never logged in clear', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/maximo/oslc/apitoken/create',
        headers: { ...maxauth('WILSON'), 'content-type': 'application/json' },
        payload: JSON.stringify({ expiration: -1 }),
      });
      assert.equal(created.statusCode, 200, created.body);
      const apikey = String(json(created).apikey);
      for (const spelling of spellings('apikey').filter((name) => name !== 'APIKEY')) {
        lines.length = 0;
        const response = await app.inject({
          url: `/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1&${spelling}=${apikey}`,
        });
        assert.equal(response.statusCode, 200, `${spelling}: ${response.body}`);
        assert.ok(lines.length > 0);
        assert.ok(!lines.join('').includes(apikey), `${spelling} logged in clear`);
      }
    });

    test('a key under 50 names the service does not accept is refused and never logged in clear', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/maximo/oslc/apitoken/create',
        headers: { ...maxauth('SMITH'), 'content-type': 'application/json' },
        payload: JSON.stringify({ expiration: -1 }),
      });
      assert.equal(created.statusCode, 200, created.body);
      const apikey = String(json(created).apikey);
      assert.equal(UNACCEPTED_SPELLINGS.length, 50);
      for (const spelling of UNACCEPTED_SPELLINGS) {
        lines.length = 0;
        const query = spelling.replace('<key>', apikey);
        const response = await app.inject({
          url: `/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1&${query}`,
        });
        assert.equal(response.statusCode, 401, `${spelling}: ${response.body}`);
        assert.ok(lines.length > 0, spelling);
        assert.ok(!lines.join('').includes(apikey), `${spelling} logged in clear`);
        // The request is still recognisable in the log: its harmless parameters as sent.
        assert.ok(lines.join('').includes('oslc.pageSize=1'), spelling);
      }
    });

    test('credentials in query strings and form bodies are not logged, whatever the spelling', async () => {
      for (const name of CREDENTIALS) {
        for (const spelling of spellings(name)) {
          lines.length = 0;
          await app.inject({ url: `/maximo/oslc/os/mxapiasset?${spelling}=${SECRET}` });
          const logged = await app.inject({
            method: 'POST',
            url: '/logs-body',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            payload: `j_username=WILSON&${spelling}=${SECRET}`,
          });
          assert.equal(logged.statusCode, 200, logged.body);
          await app.inject({
            method: 'POST',
            url: '/maximo/j_security_check',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            payload: `j_username=WILSON&${spelling}=${SECRET}`,
          });
          assert.ok(lines.length > 0);
          assert.ok(!lines.join('').includes(SECRET), `${spelling} logged in clear`);
        }
      }
    });
  });
});
