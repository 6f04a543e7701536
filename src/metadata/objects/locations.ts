import type { ObjectDef } from '../types.js';
import {
  changeTracking,
  description,
  keyAttribute,
  sameSite,
  siteAndOrg,
  siteRelation,
  status,
  statusDate,
  uniqueId,
} from './fragments.js';

export const locations: ObjectDef = {
  name: 'LOCATIONS',
  table: 'locations',
  uniqueId: 'locationsid',
  keys: ['location', 'siteid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    uniqueId('locationsid', 'Location ID'),
    keyAttribute('location', 'Location', 12, { autokey: 'LOCATIONNUM' }),
    ...siteAndOrg,
    description,
    status('LOCASSETSTATUS', 'NOT READY'),
    statusDate,
    {
      name: 'type',
      type: 'UPPER',
      title: 'Type',
      length: 16,
      domainId: 'LOCTYPE',
      defaultValue: 'OPERATING',
    },
    {
      name: 'parent',
      type: 'UPPER',
      title: 'Parent Location',
      length: 12,
      references: { object: 'LOCATIONS', on: sameSite('parent', 'location') },
      lookup: {
        kind: 'table',
        structure: 'MXAPIOPERLOC',
        match: [['siteid', 'siteid']],
        differ: [['location', 'location']],
      },
    },
    { name: 'disabled', type: 'YORN', title: 'Disabled', defaultValue: false },
    ...changeTracking,
  ],
  relations: [
    { name: 'parentlocation', object: 'LOCATIONS', on: sameSite('parent', 'location'), many: false },
    { name: 'children', object: 'LOCATIONS', on: sameSite('location', 'parent'), many: true },
    { name: 'asset', object: 'ASSET', on: sameSite('location', 'location'), many: true },
    siteRelation,
  ],
};
