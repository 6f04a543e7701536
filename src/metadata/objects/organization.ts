import type { ObjectDef } from '../types.js';
import { description, keyAttribute, uniqueId } from './fragments.js';

export const organization: ObjectDef = {
  name: 'ORGANIZATION',
  table: 'organization',
  uniqueId: 'organizationid',
  keys: ['orgid'],
  attributes: [
    uniqueId('organizationid', 'Organization ID'),
    keyAttribute('orgid', 'Organization', 8),
    description,
    { name: 'itemsetid', type: 'UPPER', title: 'Item Set', length: 8, required: true },
    { name: 'basecurrency', type: 'UPPER', title: 'Base Currency', length: 8, defaultValue: 'USD' },
    { name: 'active', type: 'YORN', title: 'Active', defaultValue: true },
  ],
};
