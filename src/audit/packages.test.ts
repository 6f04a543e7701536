import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { AuditRow } from './repository.js';
import { lastAuditId } from '../../test/helpers/audit.js';

/**
 * The package lifecycle in the audit trail (docs/audit.md, "Events"): created, distributed, downloaded on one
 * deployment; uploaded, previewed, deployed, completed, backed out, closed on another; deleted with its record
 * counts. Each step leaves exactly one record, in its own request, with who, how and from where; a refused deploy
 * leaves none.
 */
const admin = maxauth('MAXADMIN');
const PACKAGE_OBJECT = 'DMPACKAGE';

describe('audit trail: package lifecycle', () => {
  let source: TestApp;
  let target: TestApp;

  before(async () => {
    [source, target] = await Promise.all([startTestApp(), startTestApp()]);
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  let requestCounter = 0;
  /** A request with its own request id, which its record must carry. */
  async function call(app: TestApp, method: 'GET' | 'POST', url: string, payload?: unknown) {
    requestCounter += 1;
    const requestId = `audit-package-${requestCounter}`;
    const response = await app.app.inject({
      method,
      url: `/maximo/oslc${url}`,
      headers: { ...admin, 'x-request-id': requestId },
      ...(payload !== undefined && { payload: payload as object }),
    });
    return { response, requestId };
  }

  const lastId = (app: TestApp): Promise<number> => lastAuditId(app.storage.db);

  /**
   * The package records `cause` left on `app`: exactly one, of `package.<action>`, for `key`, carrying the request's
   * user, scheme, address, request id and server; answers its detail.
   */
  async function oneRecord(
    app: TestApp,
    action: string,
    key: () => string,
    cause: () => Promise<{ response: { statusCode: number; body: string }; requestId: string }>,
  ): Promise<Record<string, unknown>> {
    const since = await lastId(app);
    const { response, requestId } = await cause();
    assert.equal(response.statusCode, 200, response.body);
    await app.services.audit.seal();
    const rows: AuditRow[] = await app.storage.db
      .selectFrom('easaudit')
      .selectAll()
      .where('auditid', '>', since)
      .where('eventtype', 'like', 'package.%')
      .execute();
    assert.equal(rows.length, 1, `one package record, got ${JSON.stringify(rows)}`);
    const row = rows[0]!;
    assert.equal(row.eventtype, `package.${action}`);
    assert.equal(row.outcome, 'SUCCESS');
    assert.equal(row.objectname, PACKAGE_OBJECT);
    assert.equal(row.objectkey, key());
    assert.equal(row.userid, 'MAXADMIN');
    assert.equal(row.authscheme, 'MAXAUTH');
    assert.equal(row.requestid, requestId);
    assert.equal(row.clientaddr, '127.0.0.1');
    assert.equal(row.servername, 'TESTSERVER');
    assert.ok(row.chainseq !== null && row.digest !== null, 'sealed');
    return JSON.parse(row.detail!) as Record<string, unknown>;
  }

  test('each step of a package, on the source and the target, leaves one record with its counts', async () => {
    const created = await call(source, 'POST', '/os/mxapiasset?lean=1', {
      assetnum: 'AUDPKG1',
      siteid: 'NASHUA',
      description: 'Moved by an audited package',
    });
    assert.equal(created.response.statusCode, 201, created.response.body);
    const where = 'assetnum="AUDPKG1"';
    const defined = await call(source, 'POST', '/os/mxapidmpkgdef', {
      pkgdefname: 'AUDPKG',
      type: 'SNAPSHOT',
      status: 'APPR',
      dmpkgdefcontent: [{ objectstructure: 'MXAPIASSET', whereclause: where, cfgdataorder: 1 }],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    });
    assert.equal(defined.response.statusCode, 201, defined.response.body);

    // The source: create, distribute, download.
    let sourceId = 0;
    const sourceKey = () => `AUDPKG/${sourceId}`;
    const create = await oneRecord(source, 'create', sourceKey, async () => {
      const result = await call(source, 'POST', '/dm/create', { pkgdefname: 'AUDPKG' });
      sourceId = json(result.response).dmpackageid as number;
      return result;
    });
    assert.deepEqual(create.records, { MXAPIASSET: 1 });
    assert.match(String(create.package), /^AUDPKG_/);
    const distribute = await oneRecord(source, 'distribute', sourceKey, () =>
      call(source, 'POST', '/dm/distribute', { pkgdefname: 'AUDPKG', dmpackageid: sourceId }),
    );
    assert.deepEqual(distribute.targets, ['FILE1']);
    let file: Buffer = Buffer.alloc(0);
    const download = await oneRecord(source, 'download', sourceKey, async () => {
      const result = await call(source, 'GET', `/dm/download?dmpackagedef=AUDPKG&dmpackageid=${sourceId}`);
      file = result.response.rawPayload;
      return result;
    });
    assert.deepEqual(download.records, { MXAPIASSET: 1 });

    // The target: upload, preview, completedeploy, deploy, back out, close.
    let targetId = 0;
    const targetKey = () => `AUDPKG/${targetId}`;
    const upload = await oneRecord(target, 'upload', targetKey, async () => {
      requestCounter += 1;
      const requestId = `audit-package-${requestCounter}`;
      const response = await target.app.inject({
        method: 'POST',
        url: '/maximo/oslc/dm/upload?filename=audpkg.zip',
        headers: { ...admin, 'content-type': 'application/zip', 'x-request-id': requestId },
        payload: file,
      });
      targetId = json(response).dmpackageid as number;
      return { response, requestId };
    });
    assert.deepEqual(upload.records, { MXAPIASSET: 1 });
    const body = () => ({ pkgdefname: 'AUDPKG', dmpackageid: targetId });
    const preview = await oneRecord(target, 'preview', targetKey, () =>
      call(target, 'POST', '/dm/preview', body()),
    );
    assert.equal(preview.added, 1);
    assert.equal(preview.refusals, 0);
    const complete = await oneRecord(target, 'complete', targetKey, () =>
      call(target, 'POST', '/dm/completedeploy', body()),
    );
    assert.deepEqual(
      { records: complete.records, added: complete.added, changed: complete.changed },
      { records: { MXAPIASSET: 1 }, added: 1, changed: 0 },
    );
    const deploy = await oneRecord(target, 'deploy', targetKey, () =>
      call(target, 'POST', '/dm/deploy', body()),
    );
    assert.deepEqual({ added: deploy.added, unchanged: deploy.unchanged }, { added: 0, unchanged: 1 });
    const backout = await oneRecord(target, 'backout', targetKey, () =>
      call(target, 'POST', '/dm/backout', body()),
    );
    assert.equal(typeof backout.restored, 'number');
    const close = await oneRecord(target, 'close', targetKey, () =>
      call(target, 'POST', '/dm/close', body()),
    );
    assert.equal(close.status, 'BACKEDOUT');

    // Deleted with the records it still held: the source's package, never closed.
    const deleted = await oneRecord(source, 'delete', sourceKey, () =>
      call(source, 'POST', '/dm/delete', { pkgdefname: 'AUDPKG', dmpackageid: sourceId }),
    );
    assert.deepEqual({ status: deleted.status, records: deleted.records }, { status: 'CREATED', records: 1 });
  });

  test('a refused deploy leaves no record: a closed package is not deployed', async () => {
    const since = await lastId(target);
    const closed = await target.storage.db
      .selectFrom('dmpackage')
      .select('dmpackageid')
      .where('status', '=', 'CLOSED')
      .executeTakeFirstOrThrow();
    const refused = await call(target, 'POST', '/dm/deploy', {
      pkgdefname: 'AUDPKG',
      dmpackageid: closed.dmpackageid,
    });
    assert.equal(refused.response.statusCode, 400, refused.response.body);
    await target.services.audit.seal();
    const rows = await target.storage.db
      .selectFrom('easaudit')
      .select('eventtype')
      .where('auditid', '>', since)
      .where('eventtype', 'like', 'package.%')
      .execute();
    assert.deepEqual(rows, []);
  });
});
