import assert from 'node:assert/strict';
import { test } from 'node:test';
import { previewSummary } from './migrate-preview.js';
import { confirmation, previewText } from './migrate-text.js';

/** The preview and the question before a deploy, from a target's preview answer (docs/cli.md, "eas migrate"). */
const answer = {
  objects: [
    {
      objectstructure: 'MXAPIASSET',
      add: ['assetnum=A1, siteid=BEDFORD'],
      change: [{ key: 'assetnum=A2, siteid=BEDFORD', attributes: {} }],
      delete: [],
      unchanged: 118,
      drift: [],
      refused: [{ key: 'assetnum=A3, siteid=FAR', reason: 'BMXAA4153E - FAR is not a valid site.' }],
    },
  ],
  structural: ['ADD ASSET.MIGRATED'],
  adminmode: true,
};

test('the question names the target, the package, the counts, the structural changes and the admin mode', () => {
  const question = confirmation(
    previewSummary(answer),
    { url: 'http://prod:7001/maximo', ref: { pkgdefname: 'DEMOSNAP', dmpackageid: 7 } },
    { numsessions: 5, logoutmin: 1 },
  );
  assert.equal(
    question,
    'Deploy package 7 of DEMOSNAP to http://prod:7001/maximo: 1 to add, 1 to change, 0 to delete, 118 unchanged; ' +
      'structural changes ADD ASSET.MIGRATED; admin mode will be turned ON on http://prod:7001/maximo ' +
      '(numsessions 5, logoutmin 1) and off again?',
  );
});

test('the preview lists the structural changes, admin mode and every refused record with its reason', () => {
  const text = previewText(previewSummary(answer));
  assert.match(text, /^MXAPIASSET\s+1\s+1\s+0\s+118\s+1\s+0$/m);
  assert.match(text, /^structural changes: ADD ASSET\.MIGRATED$/m);
  assert.match(text, /^admin mode: needed/m);
  assert.match(
    text,
    /^refused: MXAPIASSET assetnum=A3, siteid=FAR: BMXAA4153E - FAR is not a valid site\.$/m,
  );
});
