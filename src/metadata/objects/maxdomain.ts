import type { ObjectDef } from '../types.js';
import { changeTracking, description, keyAttribute, uniqueId } from './fragments.js';

export const maxdomain: ObjectDef = {
  name: 'MAXDOMAIN',
  table: 'maxdomain',
  uniqueId: 'maxdomainid',
  keys: ['domainid'],
  attributes: [
    uniqueId('maxdomainid', 'Domain ID'),
    keyAttribute('domainid', 'Domain', 18),
    description,
    keyAttribute('domaintype', 'Domain Type', 10, { domainId: 'DOMTYPE' }),
    {
      name: 'maxtype',
      type: 'UPPER',
      title: 'Data Type',
      length: 8,
      domainId: 'MAXTYPE',
      defaultValue: 'ALN',
    },
    { name: 'length', type: 'INTEGER', title: 'Length', defaultValue: 20 },
    { name: 'scale', type: 'INTEGER', title: 'Scale', defaultValue: 0 },
    ...changeTracking,
  ],
};
