import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestApp } from '../../test/helpers/app.js';
import { systemDomainIds } from '../db/migrations/0002-system-domains.js';
import { packageDomainIds } from '../db/migrations/0013-migration-packages.js';
import { serviceRequestDomainIds } from '../db/migrations/0017-service-requests.js';
import { worklogDomainIds } from '../db/migrations/0026-worklog.js';
import { baseObjectStructures } from './object-structures.js';
import { asset } from './objects/asset.js';
import { baseObjects } from './objects/index.js';
import { MetadataRegistry } from './registry.js';
import type { ObjectDef, ObjectStructureDef } from './types.js';
import { MetadataError } from './validate.js';

/**
 * Building the registry checks the whole definition graph, and the service builds it at start-up (src/app.ts):
 * a broken definition stops the service with its name instead of failing the first request that reaches it.
 */

/** The base objects with ASSET replaced by `broken`. */
function withAsset(broken: ObjectDef): ObjectDef[] {
  return baseObjects.map((def) => (def.name === 'ASSET' ? broken : def));
}

/** Builds a registry and returns the problems it reports. */
function problemsOf(
  objects: readonly ObjectDef[],
  structures: readonly ObjectStructureDef[] = baseObjectStructures,
) {
  try {
    new MetadataRegistry(objects, structures);
  } catch (error) {
    assert.ok(error instanceof MetadataError, String(error));
    assert.match(error.message, /^Invalid metadata:/);
    return error.problems;
  }
  assert.fail('the registry was built');
}

test('the base definitions form a valid graph', () => {
  const registry = new MetadataRegistry();
  assert.equal(registry.object('ASSET').table, 'asset');
  assert.equal(registry.findObjectStructure('MXASSET')?.name, 'MXAPIASSET');
});

test('every domain the base definitions bind is created by the migrations', () => {
  const bound = baseObjects.flatMap((def) =>
    def.attributes.flatMap((attribute) => [
      ...(attribute.domainId ? [attribute.domainId] : []),
      ...(attribute.lookup?.kind === 'domain' && attribute.lookup.domainId
        ? [attribute.lookup.domainId]
        : []),
    ]),
  );
  assert.ok(bound.length > 5);
  assert.deepEqual(
    bound.filter(
      (domainId) =>
        ![...systemDomainIds, ...packageDomainIds, ...serviceRequestDomainIds, ...worklogDomainIds].includes(
          domainId,
        ),
    ),
    [],
  );
});

test('a relation to an unknown object fails naming the object and the relation', () => {
  const broken: ObjectDef = {
    ...asset,
    relations: [
      ...(asset.relations ?? []),
      { name: 'vendor', object: 'COMPANIES', on: [['manufacturer', 'company']], many: false },
    ],
  };
  assert.deepEqual(problemsOf(withAsset(broken)), ['object ASSET relation vendor: unknown object COMPANIES']);
});

test('a relation joining on a missing attribute fails naming both sides', () => {
  const broken: ObjectDef = {
    ...asset,
    relations: [
      {
        name: 'site',
        object: 'SITE',
        on: [
          ['sitecode', 'siteid'],
          ['orgid', 'orgcode'],
        ],
        many: false,
      },
    ],
  };
  assert.deepEqual(problemsOf(withAsset(broken)), [
    'object ASSET relation site: ASSET has no attribute sitecode',
    'object ASSET relation site: SITE has no attribute orgcode',
  ]);
});

test('an unknown domain id fails naming the object and the attribute', () => {
  const broken: ObjectDef = {
    ...asset,
    attributes: asset.attributes.map((attribute) =>
      attribute.name === 'assettype' ? { ...attribute, domainId: 'ASSETTYPES' } : attribute,
    ),
  };
  assert.deepEqual(problemsOf(withAsset(broken)), [
    'object ASSET attribute assettype: unknown domain ASSETTYPES',
  ]);
  // The same definition builds once the domain is known.
  assert.ok(
    new MetadataRegistry(withAsset(broken), baseObjectStructures, [
      ...systemDomainIds,
      ...packageDomainIds,
      ...serviceRequestDomainIds,
      ...worklogDomainIds,
      'ASSETTYPES',
    ]),
  );
});

test('references, lookups, keys and status histories are checked', () => {
  const broken: ObjectDef = {
    ...asset,
    keys: ['assetnum', 'site'],
    statusHistory: 'ASSETHISTORY',
    attributes: asset.attributes.map((attribute) => {
      if (attribute.name === 'location') {
        return { ...attribute, references: { object: 'LOCATIONS', on: [['location', 'locationid']] } };
      }
      if (attribute.name === 'parent') {
        return { ...attribute, lookup: { kind: 'table', structure: 'MXAPIASSETS' } };
      }
      if (attribute.name === 'itemnum') {
        return {
          ...attribute,
          lookup: { kind: 'table', structure: 'MXAPIITEM', match: [['itemsetid', 'site.org.itemsetid']] },
        };
      }
      return attribute;
    }),
  };
  assert.deepEqual(problemsOf(withAsset(broken)), [
    'object ASSET attribute location references: LOCATIONS has no attribute locationid',
    'object ASSET attribute parent lookup: unknown object structure MXAPIASSETS',
    'object ASSET attribute itemnum lookup match: SITE has no 1:1 relation org',
    'object ASSET: no attribute site',
    'object ASSET: unknown status history object ASSETHISTORY',
  ]);
});

test('object structures: an unknown root, child object or child join attribute fails naming the structure', () => {
  const structures: ObjectStructureDef[] = [
    ...baseObjectStructures,
    { name: 'MXAPICOMPANY', description: 'Companies', root: 'COMPANIES' },
    {
      name: 'MXAPIASSETX',
      description: 'Assets',
      root: 'ASSET',
      children: [
        { name: 'assetmeter', object: 'ASSETMETER', on: [['assetnum', 'asset']] },
        { name: 'history', object: 'ASSETHISTORY', on: [['assetnum', 'assetnum']] },
      ],
    },
  ];
  assert.deepEqual(problemsOf(baseObjects, structures), [
    'object structure MXAPICOMPANY: unknown root object COMPANIES',
    'object structure MXAPIASSETX child assetmeter: ASSETMETER has no attribute asset',
    'object structure MXAPIASSETX child history: unknown object ASSETHISTORY',
  ]);
});

test('every problem is reported at once', () => {
  const broken: ObjectDef = {
    ...asset,
    relations: [
      ...(asset.relations ?? []),
      { name: 'vendor', object: 'COMPANIES', on: [['manufacturer', 'company']], many: false },
    ],
    attributes: asset.attributes.map((attribute) =>
      attribute.name === 'status' ? { ...attribute, domainId: 'ASSETSTATUS' } : attribute,
    ),
  };
  const problems = problemsOf(withAsset(broken));
  assert.equal(problems.length, 2);
  assert.ok(problems.every((problem) => problem.startsWith('object ASSET ')));
});

test('the service does not start on a broken definition, and names it', async () => {
  // The definitions the service builds its registry from, broken in place for this test file's process only.
  const relations = asset.relations;
  const attributes = asset.attributes;
  asset.relations = [
    ...(relations ?? []),
    { name: 'vendor', object: 'COMPANIES', on: [['manufacturer', 'company']], many: false },
  ];
  asset.attributes = attributes.map((attribute) =>
    attribute.name === 'assettype' ? { ...attribute, domainId: 'ASSETTYPES' } : attribute,
  );
  try {
    await assert.rejects(startTestApp(), (error: unknown) => {
      assert.ok(error instanceof MetadataError);
      assert.deepEqual(error.problems, [
        'object ASSET attribute assettype: unknown domain ASSETTYPES',
        'object ASSET relation vendor: unknown object COMPANIES',
      ]);
      return true;
    });
  } finally {
    asset.relations = relations;
    asset.attributes = attributes;
  }
  // Restored, the same definitions start.
  const app = await startTestApp();
  await app.close();
});

test('a registry with other custom attributes sees them; the one it came from keeps its own', () => {
  const registry = new MetadataRegistry();
  const kept = { name: 'kept', type: 'ALN', title: 'Kept', length: 10 } as const;
  const added = { name: 'added', type: 'INTEGER', title: 'Added' } as const;
  registry.setCustomAttributes(new Map([['ASSET', [kept]]]));
  const version = registry.version;
  const view = registry.withCustomAttributes(new Map([['ASSET', [kept, added]]]));
  const viewAsset = view.findObjectStructure('MXAPIASSET')!.root.object;
  assert.ok(viewAsset.attributes.has('kept') && viewAsset.attributes.has('added'));
  assert.deepEqual(view.customAttributes('ASSET'), [kept, added]);
  const asset = registry.findObjectStructure('MXAPIASSET')!.root.object;
  assert.ok(asset.attributes.has('kept'));
  assert.ok(!asset.attributes.has('added'), 'the registry in force is unchanged');
  assert.equal(registry.version, version);
});
