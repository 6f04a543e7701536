import type { ObjectDef } from '../types.js';
import { keyAttribute, uniqueId } from './fragments.js';

/** One object structure a package definition covers, in deploy order, with its where clause (SNAPSHOT). */
export const dmpkgdefcontent: ObjectDef = {
  name: 'DMPKGDEFCONTENT',
  table: 'dmpkgdefcontent',
  uniqueId: 'dmpkgdefcontentid',
  keys: ['pkgdefname', 'objectstructure'],
  attributes: [
    uniqueId('dmpkgdefcontentid', 'Package Content ID'),
    keyAttribute('pkgdefname', 'Package Definition', 30, {
      references: { object: 'DMPACKAGEDEF', on: [['pkgdefname', 'pkgdefname']] },
    }),
    keyAttribute('objectstructure', 'Object Structure', 30),
    { name: 'whereclause', type: 'ALN', title: 'Where Clause', length: 4000 },
    { name: 'cfgdataorder', type: 'INTEGER', title: 'Deploy Order', defaultValue: 1 },
  ],
};
