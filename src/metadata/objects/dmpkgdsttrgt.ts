import type { ObjectDef } from '../types.js';
import { description, keyAttribute, uniqueId } from './fragments.js';

/**
 * A distribution target of a package definition: a FILE target (the package file, downloaded) or a DATABASE
 * target (the target deployment's database by URL). `password` is sealed by the migration service's write rules
 * and never returned.
 */
export const dmpkgdsttrgt: ObjectDef = {
  name: 'DMPKGDSTTRGT',
  table: 'dmpkgdsttrgt',
  uniqueId: 'dmpkgdsttrgtid',
  keys: ['pkgdefname', 'targetname'],
  attributes: [
    uniqueId('dmpkgdsttrgtid', 'Target ID'),
    keyAttribute('pkgdefname', 'Package Definition', 30, {
      references: { object: 'DMPACKAGEDEF', on: [['pkgdefname', 'pkgdefname']] },
    }),
    keyAttribute('targetname', 'Target', 30),
    { name: 'type', type: 'UPPER', title: 'Type', length: 10, required: true, domainId: 'DMPKGTRGTTYPE' },
    { name: 'url', type: 'ALN', title: 'Database URL or File Path', length: 1000 },
    { name: 'username', type: 'ALN', title: 'User Name', length: 100 },
    { name: 'password', type: 'ALN', title: 'Password', writeOnly: true },
    { name: 'schemaname', type: 'ALN', title: 'Schema', length: 63 },
    description,
  ],
};
