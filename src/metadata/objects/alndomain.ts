import type { ObjectDef } from '../types.js';
import { domainValueAttributes, uniqueId } from './fragments.js';

export const alndomain: ObjectDef = {
  name: 'ALNDOMAIN',
  table: 'alndomain',
  uniqueId: 'alndomainid',
  keys: ['domainid', 'siteid', 'orgid', 'value'],
  attributes: [uniqueId('alndomainid', 'ALN Domain ID'), ...domainValueAttributes('ALN')],
};
