import type { ObjectDef } from '../types.js';
import { domainValueAttributes, uniqueId } from './fragments.js';

export const numericdomain: ObjectDef = {
  name: 'NUMERICDOMAIN',
  table: 'numericdomain',
  uniqueId: 'numericdomainid',
  keys: ['domainid', 'siteid', 'orgid', 'value'],
  attributes: [uniqueId('numericdomainid', 'Numeric Domain ID'), ...domainValueAttributes('DECIMAL')],
};
