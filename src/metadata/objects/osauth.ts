import type { ObjectDef } from '../types.js';
import { keyAttribute, uniqueId } from './fragments.js';

/**
 * A security group's rights on one object structure (src/auth/README.md): read, insert, update, delete. Served as the
 * child collection `osauth` of MXAPIGROUP, so a group's rights travel with it in migration packages
 * (docs/migration.md); only administrators may write them (src/auth/rights-rules.ts).
 */
export const osauth: ObjectDef = {
  name: 'OSAUTH',
  table: 'osauth',
  uniqueId: 'osauthid',
  keys: ['groupname', 'objectstructure'],
  attributes: [
    uniqueId('osauthid', 'Authorization ID'),
    keyAttribute('groupname', 'Group', 30, {
      references: { object: 'MAXGROUP', on: [['groupname', 'groupname']] },
    }),
    keyAttribute('objectstructure', 'Object Structure', 30),
    { name: 'canread', type: 'YORN', title: 'Read', defaultValue: false },
    { name: 'caninsert', type: 'YORN', title: 'Insert', defaultValue: false },
    { name: 'canupdate', type: 'YORN', title: 'Update', defaultValue: false },
    { name: 'candelete', type: 'YORN', title: 'Delete', defaultValue: false },
  ],
};
