import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { RouteSummary } from '../app.js';
import type { DynamicDatabase } from '../db/schema.js';
import { isUnder, normalisedPath } from '../http/route-path.js';

/**
 * Access decided on the decoded path: every route, with every segment of its URL %-encoded in turn (upper- and
 * lower-case escapes), gets the refusal its plain URL gets. The router decodes paths before matching, so a check
 * on the raw URL would let `/maximo/ap%69/os/...` through the key-only route.
 */

const NO_RIGHTS = 'MXAPIGROUP';
const SAMPLE_PARAMETERS: Record<string, string> = {
  attribute: 'status',
  child: 'groupuser',
  childId: '1',
  code: 'BMXAA7901E',
};

/** Spellings of a segment with one character %-escaped: the first letter or digit, in both cases of hex digits. */
function encodedSpellings(segment: string): string[] {
  const index = segment.search(/[A-Za-z0-9]/);
  if (index === -1) return [];
  const hex = segment.charCodeAt(index).toString(16);
  const at = (escape: string) => `${segment.slice(0, index)}%${escape}${segment.slice(index + 1)}`;
  return [...new Set([at(hex.toUpperCase()), at(hex.toLowerCase())])];
}

/** The URL with each of its segments encoded in turn. */
function encodedUrls(url: string): string[] {
  const segments = url.split('/');
  const urls: string[] = [];
  for (let i = 1; i < segments.length; i += 1) {
    for (const spelling of encodedSpellings(segments[i]!)) {
      urls.push([...segments.slice(0, i), spelling, ...segments.slice(i + 1)].join('/'));
    }
  }
  return urls;
}

describe('route security on the decoded path', () => {
  let t: TestApp;
  let existingId = '';

  before(async () => {
    t = await startTestApp({ EAS_API_KEY_ONLY: '1' });
    const db = t.storage.db as unknown as Kysely<DynamicDatabase>;
    const object = t.services.metadata.findObjectStructure(NO_RIGHTS)!.root.object;
    const row = await db
      .selectFrom(object.table)
      .select(object.uniqueId)
      .orderBy(object.uniqueId)
      .executeTakeFirstOrThrow();
    existingId = String(row[object.uniqueId]);
  });
  after(() => t.close());

  function urlOf(route: RouteSummary): string {
    return route.url
      .replace(/:([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?/g, (_match, name: string) => {
        if (name === 'os') return NO_RIGHTS.toLowerCase();
        if (name === 'id') return existingId;
        return SAMPLE_PARAMETERS[name] ?? '1';
      })
      .replace(/\*/g, 'any');
  }

  function send(route: RouteSummary, url: string, headers: Record<string, string>) {
    const options: InjectOptions = { method: route.method as InjectOptions['method'], url, headers };
    if (!['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(route.method)) options.payload = {};
    return t.app.inject(options);
  }

  function refusal(response: LightMyRequestResponse): string {
    let reasonCode: unknown;
    try {
      reasonCode = json(response).Error?.reasonCode;
    } catch {
      reasonCode = 'not JSON';
    }
    return `${response.statusCode} ${String(reasonCode)}`;
  }

  test('every route refuses with each encoded spelling of each path segment as with the plain path', async () => {
    const apiPrefix = `${t.config.contextRoot}/api`;
    const admin = maxauth('MAXADMIN');
    const smith = maxauth('SMITH');
    const problems: string[] = [];
    let checked = 0;
    for (const route of t.services.routes) {
      const access = route.access;
      const keyOnly = isUnder(route.url, apiPrefix);
      if (!keyOnly && (!access || access.kind === 'public')) continue;
      // Key-only: even the administrator's credentials are refused without a key. Elsewhere: SMITH has no right
      // on NO_RIGHTS and is no administrator, and anonymous callers are refused everywhere.
      const cases: Array<{ who: string; headers: Record<string, string> }> = keyOnly
        ? [{ who: 'MAXADMIN by maxauth', headers: admin }]
        : [
            { who: 'anonymous', headers: {} },
            ...(access?.kind === 'admin' || access?.kind === 'objectStructure'
              ? [{ who: 'SMITH', headers: smith }]
              : []),
          ];
      const plainUrl = urlOf(route);
      for (const { who, headers } of cases) {
        const expected = refusal(await send(route, plainUrl, headers));
        if (!/^4\d\d /.test(expected)) {
          problems.push(`${route.method} ${plainUrl} as ${who}: plain path not refused (${expected})`);
          continue;
        }
        for (const url of encodedUrls(plainUrl)) {
          checked += 1;
          const got = refusal(await send(route, url, headers));
          if (got !== expected) problems.push(`${route.method} ${url} as ${who}: ${got}, plain ${expected}`);
        }
      }
    }
    assert.ok(checked > 100, `${checked} encoded requests`);
    assert.deepEqual(problems, []);
  });

  test('the reported bypass: maxauth on /maximo/ap%69/os/... is refused on the key-only route', async () => {
    const response = await t.app.inject({
      url: '/maximo/ap%69/os/mxapiasset?lean=1',
      headers: maxauth('MAXADMIN'),
    });
    assert.equal(response.statusCode, 401);
    assert.equal(json(response).Error?.reasonCode, 'BMXAA7901E');
  });

  test('paths are decoded and normalised before a decision', () => {
    assert.equal(normalisedPath('/maximo/ap%69/os?x=1'), '/maximo/api/os');
    assert.equal(normalisedPath('/maximo//api/./os'), '/maximo/api/os');
    assert.equal(normalisedPath('/maximo/oslc/../api/os'), '/maximo/api/os');
    assert.equal(normalisedPath('/maximo%2Fapi%2Fos'), '/maximo/api/os');
    assert.equal(isUnder('/maximo/api', '/maximo/api'), true);
    assert.equal(isUnder('/maximo/apix/os', '/maximo/api'), false);
  });
});
