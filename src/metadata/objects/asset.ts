import type { ObjectDef } from '../types.js';
import {
  changeTracking,
  description,
  keyAttribute,
  locationAttribute,
  sameSite,
  siteAndOrg,
  siteRelation,
  status,
  statusDate,
  uniqueId,
} from './fragments.js';

/**
 * Asset status changes by internal value: a decommissioned asset stays decommissioned. Listed by the `status`
 * lookup; synonyms of the current internal value are other statuses too (OPERATING → ACTIVE).
 */
const assetStatusTransitions: Readonly<Record<string, readonly string[]>> = {
  'NOT READY': ['NOT READY', 'OPERATING', 'DECOMMISSIONED'],
  OPERATING: ['OPERATING', 'NOT READY', 'DECOMMISSIONED'],
  DECOMMISSIONED: [],
};

export const asset: ObjectDef = {
  name: 'ASSET',
  table: 'asset',
  uniqueId: 'assetuid',
  keys: ['assetnum', 'siteid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    uniqueId('assetuid', 'Asset ID'),
    // The deployed systems' numeric asset identifier, numbered by the database (docs/compatibility.md, "ASSETID").
    { name: 'assetid', type: 'BIGINT', title: 'Asset Identifier', generated: true },
    keyAttribute('assetnum', 'Asset', 25, { autokey: 'ASSETNUM' }),
    ...siteAndOrg,
    description,
    status('LOCASSETSTATUS', 'NOT READY', {
      lookup: { kind: 'domain', transitions: assetStatusTransitions },
    }),
    statusDate,
    { name: 'assettype', type: 'UPPER', title: 'Type', length: 16, domainId: 'ASSETTYPE' },
    locationAttribute(),
    {
      name: 'parent',
      type: 'UPPER',
      title: 'Parent',
      length: 25,
      references: { object: 'ASSET', on: sameSite('parent', 'assetnum') },
      lookup: {
        kind: 'table',
        structure: 'MXAPIASSET',
        match: [['siteid', 'siteid']],
        differ: [['assetnum', 'assetnum']],
      },
    },
    { name: 'serialnum', type: 'ALN', title: 'Serial #', length: 64 },
    { name: 'manufacturer', type: 'UPPER', title: 'Manufacturer', length: 12 },
    {
      name: 'itemnum',
      type: 'UPPER',
      title: 'Rotating Item',
      length: 30,
      // Rotating items of the item set of the site's organization.
      lookup: {
        kind: 'table',
        structure: 'MXAPIITEM',
        where: 'rotating=1',
        match: [['itemsetid', 'site.organization.itemsetid']],
      },
    },
    { name: 'purchaseprice', type: 'AMOUNT', title: 'Purchase Price' },
    { name: 'installdate', type: 'DATETIME', title: 'Installation Date' },
    { name: 'priority', type: 'INTEGER', title: 'Priority' },
    { name: 'isrunning', type: 'YORN', title: 'Up', defaultValue: true },
    ...changeTracking,
  ],
  statusHistory: 'ASSETSTATUS',
  relations: [
    { name: 'location', object: 'LOCATIONS', on: sameSite('location', 'location'), many: false },
    { name: 'parentasset', object: 'ASSET', on: sameSite('parent', 'assetnum'), many: false },
    { name: 'openwo', object: 'WORKORDER', on: sameSite('assetnum', 'assetnum'), many: true },
    siteRelation,
  ],
};
