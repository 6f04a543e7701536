import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errors } from '../errors.js';
import { MetadataRegistry } from '../metadata/registry.js';
import { FIX_ON_SOURCE, refusalRemedy } from './refusal-remedy.js';
import { setupFirst } from './setup-order.js';

/** The two pure rules of setting up a target (docs/migration.md, "Setting up a target"), without a database. */
const metadata = new MetadataRegistry();
const find = (name: string) => metadata.findObjectStructure(name);
const structure = (name: string) => find(name)!;

test('a package carries organizations, then sites, then the rest in their order; aliases count', () => {
  const content = ['MXAPIOPERLOC', 'MXSITE', 'MXAPIASSET', 'MXORGANIZATION', 'MXAPIITEM', 'NOSUCH'].map(
    (objectstructure, index) => ({ objectstructure, cfgdataorder: index + 1 }),
  );
  assert.deepEqual(
    setupFirst(content, find).map((entry) => entry.objectstructure),
    ['MXORGANIZATION', 'MXSITE', 'MXAPIOPERLOC', 'MXAPIASSET', 'MXAPIITEM', 'NOSUCH'],
  );
});

test('a refusal for what the target lacks is fixed on the target; any other on the source', () => {
  const asset = structure('MXAPIASSET');
  assert.match(refusalRemedy(asset, errors.invalidSite('BEDFORD', 'asset')), /site BEDFORD .*MXAPISITE/);
  assert.match(
    refusalRemedy(asset, errors.invalidReference('Location', 'L1', 'location', 'asset')),
    /^The location L1 does not exist on this deployment: create it here \(object structure MXAPIOPERLOC\)/,
  );
  assert.match(
    refusalRemedy(
      structure('MXAPISITE'),
      errors.invalidReference('Organization', 'EAGLEUK', 'orgid', 'site'),
    ),
    /^The organization EAGLEUK does not exist on this deployment: create it here \(object structure MXAPIORGANIZATION\)/,
  );
  // A child collection's reference: the member's object is found below the root (a user of MXAPIPERUSER).
  assert.match(
    refusalRemedy(structure('MXAPIGROUP'), errors.invalidReference('User', 'NOBODY', 'userid', 'groupuser')),
    /^The user NOBODY does not exist on this deployment: create it here \(object structure MXAPIPERUSER, child maxuser\)/,
  );
  assert.match(
    refusalRemedy(asset, errors.notInValueList('Type', 'CLIONLY', 'assettype', 'asset')),
    /^Add the value CLIONLY to the domain ASSETTYPE on this deployment \(object structure MXAPIDOMAIN\)/,
  );
  // An organization that does not match the site's is the record's own fault, not a missing record.
  assert.equal(
    refusalRemedy(asset, errors.invalidReference('Organization', 'OTHER', 'orgid', 'asset')),
    FIX_ON_SOURCE,
  );
  assert.equal(refusalRemedy(asset, errors.requiredField('Site', 'ASSET', 'siteid', 'asset')), FIX_ON_SOURCE);
});
