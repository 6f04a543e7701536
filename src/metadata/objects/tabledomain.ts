import type { ObjectDef } from '../types.js';
import { keyAttribute, uniqueId } from './fragments.js';

export const tabledomain: ObjectDef = {
  name: 'TABLEDOMAIN',
  table: 'tabledomain',
  uniqueId: 'tabledomainid',
  keys: ['domainid', 'siteid', 'orgid'],
  attributes: [
    uniqueId('tabledomainid', 'Table Domain ID'),
    keyAttribute('domainid', 'Domain', 18, {
      references: { object: 'MAXDOMAIN', on: [['domainid', 'domainid']] },
    }),
    { name: 'objectname', type: 'UPPER', title: 'Object', length: 30, required: true },
    { name: 'listwhereclause', type: 'ALN', title: 'List Where Clause', length: 4000 },
    { name: 'validtnwhereclause', type: 'ALN', title: 'Validation Where Clause', length: 4000 },
    { name: 'siteid', type: 'UPPER', title: 'Site', length: 8, insertOnly: true },
    { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
  ],
};
