import type { ObjectDef } from '../types.js';
import { changeTracking, description, keyAttribute, status, uniqueId } from './fragments.js';

export const item: ObjectDef = {
  name: 'ITEM',
  table: 'item',
  uniqueId: 'itemid',
  keys: ['itemnum', 'itemsetid'],
  attributes: [
    uniqueId('itemid', 'Item ID'),
    keyAttribute('itemnum', 'Item', 30),
    keyAttribute('itemsetid', 'Item Set', 8),
    description,
    status('ITEMSTATUS', 'PENDING'),
    {
      name: 'commoditygroup',
      type: 'UPPER',
      title: 'Commodity Group',
      length: 8,
      domainId: 'COMMODITYGROUP',
    },
    { name: 'orderunit', type: 'UPPER', title: 'Order Unit', length: 16 },
    { name: 'issueunit', type: 'UPPER', title: 'Issue Unit', length: 16 },
    { name: 'rotating', type: 'YORN', title: 'Rotating', defaultValue: false },
    { name: 'unitcost', type: 'AMOUNT', title: 'Unit Cost' },
    ...changeTracking,
  ],
};
