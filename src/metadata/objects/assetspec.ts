import type { ObjectDef } from '../types.js';
import { changeTracking, keyAttribute, underAsset, uniqueId } from './fragments.js';

export const assetspec: ObjectDef = {
  name: 'ASSETSPEC',
  table: 'assetspec',
  uniqueId: 'assetspecid',
  keys: ['assetnum', 'siteid', 'assetattrid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    uniqueId('assetspecid', 'Asset Specification ID'),
    ...underAsset,
    keyAttribute('assetattrid', 'Attribute', 20),
    { name: 'alnvalue', type: 'ALN', title: 'Alphanumeric Value', length: 254 },
    { name: 'numvalue', type: 'DECIMAL', title: 'Numeric Value' },
    { name: 'measureunitid', type: 'UPPER', title: 'Unit of Measure', length: 16 },
    ...changeTracking,
  ],
};
