import type { ObjectDef } from '../types.js';
import { changeTracking, keyAttribute, uniqueId } from './fragments.js';

/**
 * A pending change of a custom attribute (src/dbconfig, docs/dbconfig.md): staged through MXAPIMAXATTRIBUTECFG,
 * checked by the database-configuration write rules, and carried out by "apply configuration changes".
 */
export const maxattributecfg: ObjectDef = {
  name: 'MAXATTRIBUTECFG',
  table: 'maxattributecfg',
  uniqueId: 'maxattributecfgid',
  keys: ['objectname', 'attributename'],
  attributes: [
    uniqueId('maxattributecfgid', 'Pending Change ID'),
    keyAttribute('objectname', 'Object', 30),
    keyAttribute('attributename', 'Attribute', 30),
    { name: 'changetype', type: 'UPPER', title: 'Change', length: 6, required: true },
    { name: 'maxtype', type: 'UPPER', title: 'Data Type', length: 8 },
    { name: 'length', type: 'INTEGER', title: 'Length' },
    { name: 'scale', type: 'INTEGER', title: 'Scale' },
    { name: 'required', type: 'YORN', title: 'Required' },
    { name: 'defaultvalue', type: 'ALN', title: 'Default Value', length: 254 },
    { name: 'domainid', type: 'UPPER', title: 'Domain', length: 18 },
    { name: 'title', type: 'ALN', title: 'Title', length: 80 },
    ...changeTracking,
  ],
};
