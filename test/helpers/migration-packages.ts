import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import {
  FORMAT_VERSION,
  writePackageFile,
  type Manifest,
} from '../../src/migration/transfer/package-file.js';
import { json, maxauth, type TestApp } from './app.js';

/**
 * Packages written by a test as a source would write them (the zip format of src/migration/transfer/package-file.ts),
 * with any mix of records, deletions, properties and custom attributes, and the calls that deploy and back them out.
 */
export interface PackageEntry {
  objectstructure: string;
  lines: ReadonlyArray<Record<string, unknown>>;
}

const admin = maxauth('MAXADMIN');

export async function post(
  app: TestApp,
  url: string,
  body: unknown,
  headers: Record<string, string> = admin,
) {
  return app.app.inject({ method: 'POST', url: `/maximo/oslc${url}`, headers, payload: body as object });
}

/** The package file of `entries` in order, its manifest sized and hashed as an upload checks it. */
export async function builtPackage(
  pkgdefname: string,
  entries: readonly PackageEntry[],
  attributes: NonNullable<Manifest['attributes']>,
): Promise<Buffer> {
  const sources = entries.map((entry, index) => {
    const lines = entry.lines.map((line) => JSON.stringify(line));
    const text = lines.map((line) => `${line}\n`).join('');
    return {
      manifest: {
        name: `data/${String(index + 1).padStart(3, '0')}-${entry.objectstructure}.ndjson`,
        objectstructure: entry.objectstructure,
        cfgdataorder: index + 1,
        count: lines.length,
        bytes: Buffer.byteLength(text),
        sha256: createHash('sha256').update(text).digest('hex'),
      },
      lines,
    };
  });
  const manifest: Manifest = {
    formatVersion: FORMAT_VERSION,
    source: 'test-source/built/package',
    pkgdefname,
    type: 'SNAPSHOT',
    xmlaction: 'AddChange',
    package: `${pkgdefname}_1`,
    createby: 'MAXADMIN',
    createdate: new Date().toISOString(),
    entries: sources.map((source) => source.manifest),
    attributes,
  };
  return buffer(
    writePackageFile(
      manifest,
      sources.map((source) => ({
        name: source.manifest.name,
        lines: async function* () {
          yield* source.lines;
        },
      })),
    ),
  );
}

/** A session of MAXADMIN: while admin mode is on, each maxauth request would be a login of its own. */
export async function session(app: TestApp): Promise<Record<string, string>> {
  const response = await app.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers: admin });
  const cookie = ([] as string[])
    .concat(response.headers['set-cookie'] ?? [])
    .find((line) => line.startsWith('JSESSIONID='));
  assert.ok(cookie, response.body);
  return { cookie: cookie.split(';')[0]! };
}

export async function adminMode(app: TestApp, cookie: Record<string, string>, on: boolean): Promise<void> {
  const response = on
    ? await post(app, '/adminmode/on', { numsessions: 5, logoutmin: 0 }, cookie)
    : await post(app, '/adminmode/off', {}, cookie);
  assert.equal(response.statusCode, 200, response.body);
  for (let attempt = 0; on && attempt < 100; attempt += 1) {
    const state = await app.app.inject({
      method: 'GET',
      url: '/maximo/oslc/adminmode/state',
      headers: cookie,
    });
    if (json(state).state === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (on) assert.fail('admin mode did not reach state 1');
}

/** Uploads and deploys a built package (under admin mode when it adds attributes): its target-side id. */
export async function deployed(
  app: TestApp,
  pkgdefname: string,
  entries: readonly PackageEntry[],
  attributes: NonNullable<Manifest['attributes']>,
  cookie: Record<string, string>,
): Promise<number> {
  const uploaded = await app.app.inject({
    method: 'POST',
    url: `/maximo/oslc/dm/upload?filename=${pkgdefname}.zip`,
    headers: { ...cookie, 'content-type': 'application/zip' },
    payload: await builtPackage(pkgdefname, entries, attributes),
  });
  assert.equal(uploaded.statusCode, 200, uploaded.body);
  const dmpackageid = json(uploaded).dmpackageid as number;
  if (attributes.length > 0) await adminMode(app, cookie, true);
  const deploy = await post(app, '/dm/deploy', { pkgdefname, dmpackageid }, cookie);
  if (attributes.length > 0) await adminMode(app, cookie, false);
  assert.equal(deploy.statusCode, 200, deploy.body);
  return dmpackageid;
}

export async function backoutPost(
  app: TestApp,
  pkgdefname: string,
  dmpackageid: number,
  cookie: Record<string, string>,
  force = false,
) {
  return post(app, '/dm/backout', { pkgdefname, dmpackageid, ...(force && { force }) }, cookie);
}
