import type { ObjectDef } from '../types.js';
import { description, keyAttribute, uniqueId } from './fragments.js';

export const site: ObjectDef = {
  name: 'SITE',
  table: 'site',
  uniqueId: 'siteuid',
  keys: ['siteid'],
  attributes: [
    uniqueId('siteuid', 'Site ID'),
    keyAttribute('siteid', 'Site', 8),
    {
      name: 'orgid',
      type: 'UPPER',
      title: 'Organization',
      length: 8,
      required: true,
      // The site's records carry its organization (filled from the site): moving a site would orphan them.
      insertOnly: true,
      references: { object: 'ORGANIZATION', on: [['orgid', 'orgid']] },
      lookup: { kind: 'table', structure: 'MXAPIORGANIZATION', where: 'active=1' },
    },
    description,
    { name: 'active', type: 'YORN', title: 'Active', defaultValue: true },
  ],
  relations: [{ name: 'organization', object: 'ORGANIZATION', on: [['orgid', 'orgid']], many: false }],
};
