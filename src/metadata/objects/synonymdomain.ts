import type { ObjectDef } from '../types.js';
import { domainValueAttributes, keyAttribute, uniqueId } from './fragments.js';

export const synonymdomain: ObjectDef = {
  name: 'SYNONYMDOMAIN',
  table: 'synonymdomain',
  uniqueId: 'synonymdomainid',
  keys: ['domainid', 'maxvalue', 'siteid', 'orgid', 'value'],
  attributes: [
    uniqueId('synonymdomainid', 'Synonym Domain ID'),
    ...domainValueAttributes('ALN'),
    keyAttribute('maxvalue', 'Internal Value', 50),
    { name: 'defaults', type: 'YORN', title: 'Default', defaultValue: false },
  ],
};
