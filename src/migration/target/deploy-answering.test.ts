import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { json, maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { listenOnFreePort } from '../../../test/helpers/raw-http.js';
import { FORMAT_VERSION, writePackageFile, type Manifest } from '../transfer/package-file.js';

/**
 * The process keeps answering during a long deploy (docs/migration.md, "Progress"): on PGlite the database runs on
 * the event loop's thread, and a deploy of 20,000 records takes seconds. Polls of the package's progress, over a
 * real connection, are answered all through the deploy and see its progress move on. The longest wait is bounded as
 * a part of the deploy's own duration, not in milliseconds: both stretch alike when other processes share the cores
 * (as in CI), while a deploy that held the event loop for long stretches would keep some poll waiting for a large
 * part of it.
 */
const admin = maxauth('MAXADMIN');
const RECORDS = 20_000;
const POLL_EVERY_MS = 100;
/** The longest a poll may wait, as a part of the deploy's duration (on a quiet machine about a fifteenth). */
const LONGEST_WAIT_OF_DEPLOY = 0.25;

async function assetPackage(pkgdefname: string): Promise<Buffer> {
  const lines = Array.from({ length: RECORDS }, (_, index) =>
    JSON.stringify({
      assetnum: `ANSWER${String(index).padStart(6, '0')}`,
      siteid: 'BEDFORD',
      description: `Asset ${index}`,
      status: 'OPERATING',
    }),
  );
  const text = lines.map((line) => `${line}\n`).join('');
  const name = 'data/001-MXAPIASSET.ndjson';
  const manifest: Manifest = {
    formatVersion: FORMAT_VERSION,
    source: 'elsewhere:5432/test/source',
    pkgdefname,
    type: 'SNAPSHOT',
    xmlaction: 'AddChange',
    package: `${pkgdefname}_1`,
    createby: 'MAXADMIN',
    createdate: new Date().toISOString(),
    entries: [
      {
        name,
        objectstructure: 'MXAPIASSET',
        cfgdataorder: 1,
        count: RECORDS,
        bytes: Buffer.byteLength(text),
        sha256: createHash('sha256').update(text).digest('hex'),
      },
    ],
  };
  const chunks: Buffer[] = [];
  const file = writePackageFile(manifest, [
    {
      name,
      lines: async function* () {
        yield* lines;
      },
    },
  ]);
  for await (const chunk of file) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The polling client: GETs `url` every `everyMs` until told to stop, then posts what it read. */
const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, cookie, everyMs } = workerData;
let stopping = false;
parentPort.on('message', () => (stopping = true));
(async () => {
  // Once before the deploy: a thread's first fetch also loads the HTTP client.
  await (await fetch(url, { headers: { cookie } })).json();
  parentPort.postMessage('ready');
  const polls = [];
  while (!stopping) {
    const sent = performance.now();
    const response = await fetch(url, { headers: { cookie } });
    const record = await response.json();
    polls.push({
      waitedMs: performance.now() - sent,
      httpStatus: response.status,
      status: record.status,
      progress: record.progressstatus,
    });
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  parentPort.postMessage(polls);
})();
`;

interface Poll {
  httpStatus: number;
  waitedMs: number;
  status: string;
  progress: string;
}

describe('a long deploy leaves the process answering', () => {
  let target: TestApp;
  let port: number;
  before(async () => {
    target = await startTestApp();
    port = await listenOnFreePort(target.app);
  });
  after(() => target.close());

  test(`progress polls during a ${RECORDS}-record deploy are answered all through it`, async () => {
    const uploaded = await target.app.inject({
      method: 'POST',
      url: '/maximo/oslc/dm/upload?filename=package.zip',
      headers: { ...admin, 'content-type': 'application/zip' },
      payload: await assetPackage('ANSWERING'),
    });
    assert.equal(uploaded.statusCode, 200, uploaded.body);
    const dmpackageid = json(uploaded).dmpackageid as number;
    // A session: what a browser or client polling the progress holds; it needs no database per request.
    const login = await fetch(`http://127.0.0.1:${port}/maximo/oslc/login`, {
      method: 'POST',
      headers: admin,
    });
    assert.equal(login.status, 200);
    const cookie = login.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const url = `http://127.0.0.1:${port}/maximo/oslc/dm/package?pkgdefname=ANSWERING&dmpackageid=${dmpackageid}`;
    // The client polls from a thread of its own, as a client in another process would: its own turns do not wait
    // for the server's event loop, so what is measured is the server's answer.
    const poller = new Worker(POLLER, { eval: true, workerData: { url, cookie, everyMs: POLL_EVERY_MS } });
    poller.once('error', (error) => assert.fail(error));
    const [ready] = (await once(poller, 'message')) as [string];
    assert.equal(ready, 'ready');
    const polled = once(poller, 'message') as Promise<[Poll[]]>;
    const deployStarted = performance.now();
    const deployed = await fetch(`http://127.0.0.1:${port}/maximo/oslc/dm/deploy`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ pkgdefname: 'ANSWERING', dmpackageid }),
    });
    const deployMs = performance.now() - deployStarted;
    poller.postMessage('stop');
    const [polls] = await polled;
    await poller.terminate();
    assert.equal(deployed.status, 200, await deployed.text());

    const slowest = Math.max(...polls.map((reading) => reading.waitedMs));
    assert.ok(
      slowest < deployMs * LONGEST_WAIT_OF_DEPLOY,
      `the slowest of ${polls.length} polls waited ${Math.round(slowest)} ms of a ${Math.round(deployMs)} ms deploy`,
    );
    const during = polls.filter((reading) => reading.status === 'DEPLOY_INPROGRESS');
    const moving = new Set(
      during.map((reading) => reading.progress).filter((text) => /^Deploying: [1-9]/.test(text)),
    );
    assert.ok(moving.size >= 2, `the progress moved on under the polls: ${[...moving].join(' | ')}`);
    assert.ok(polls.every((reading) => reading.httpStatus === 200));
    const final = (await (await fetch(url, { headers: { cookie } })).json()) as Record<string, string>;
    assert.equal(final.status, 'DEPLOYED');
    assert.match(final.progressstatus!, new RegExp(`Deployed: ${RECORDS} added`));
  });
});
