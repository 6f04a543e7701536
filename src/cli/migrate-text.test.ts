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
    'Deploy package 7 of DEMOSNAP to http://prod:7001/maximo: 1 to add, 1 to change, 0 to delete, 118 unchanged, 1 refused; ' +
      'structural changes ADD ASSET.MIGRATED; admin mode will be turned ON on http://prod:7001/maximo ' +
      '(numsessions 5, logoutmin 1) and off again?',
  );
});

test('the preview lists the structural changes, admin mode and a lone refused record by its key with its reason', () => {
  const text = previewText(previewSummary(answer));
  assert.match(text, /^MXAPIASSET\s+1\s+1\s+0\s+118\s+1\s+0$/m);
  assert.match(text, /^structural changes: ADD ASSET\.MIGRATED$/m);
  assert.match(text, /^admin mode: needed/m);
  assert.match(
    text,
    /^refused: MXAPIASSET assetnum=A3, siteid=FAR: BMXAA4153E - FAR is not a valid site\.$/m,
  );
});

test('identical refusals are one line: the count, the structures, the reason and the remedy once', () => {
  const remedy =
    'The site BEDFORD does not exist on this deployment: create it here (object structure MXAPISITE).';
  const refused = (count: number, prefix: string) =>
    Array.from({ length: count }, (_, index) => ({
      key: `${prefix}=${prefix.toUpperCase()}${index}, siteid=BEDFORD`,
      reason: 'BMXAA4153E - BEDFORD is not a valid site.',
      remedy,
    }));
  const text = previewText(
    previewSummary({
      objects: [
        { objectstructure: 'MXAPIASSET', add: [], refused: refused(100, 'assetnum') },
        { objectstructure: 'MXAPIOPERLOC', add: [], refused: refused(45, 'location') },
      ],
      refusalgroups: [
        {
          reasoncode: 'BMXAA4153E',
          reason: 'BMXAA4153E - BEDFORD is not a valid site.',
          remedy,
          count: 145,
          objectstructures: [
            { objectstructure: 'MXAPIASSET', count: 100 },
            { objectstructure: 'MXAPIOPERLOC', count: 45 },
          ],
          examples: ['MXAPIASSET assetnum=ASSETNUM0, siteid=BEDFORD'],
        },
      ],
    }),
  );
  const lines = text.split('\n').filter((line) => line.startsWith('refused:'));
  assert.deepEqual(lines, [
    'refused: 145 records (MXAPIASSET 100, MXAPIOPERLOC 45; e.g. MXAPIASSET assetnum=ASSETNUM0, siteid=BEDFORD): ' +
      `BMXAA4153E - BEDFORD is not a valid site. Remedy: ${remedy}`,
  ]);
});

test('a target that lists refusals one by one only: grouped by reason here, without a remedy', () => {
  const summary = previewSummary({
    objects: [
      {
        objectstructure: 'MXAPIASSET',
        refused: [
          { key: 'assetnum=A1, siteid=FAR', reason: 'BMXAA4153E - FAR is not a valid site.' },
          { key: 'assetnum=A2, siteid=FAR', reason: 'BMXAA4153E - FAR is not a valid site.' },
          { key: 'assetnum=A3, siteid=BEDFORD', reason: 'BMXAA4195E - Site is required.' },
        ],
      },
    ],
  });
  assert.deepEqual(
    summary.refusalGroups.map((group) => [group.reason, group.count, group.remedy]),
    [
      ['BMXAA4153E - FAR is not a valid site.', 2, ''],
      ['BMXAA4195E - Site is required.', 1, ''],
    ],
  );
});
