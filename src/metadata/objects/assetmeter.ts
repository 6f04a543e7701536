import type { ObjectDef } from '../types.js';
import { changeTracking, keyAttribute, underAsset, uniqueId } from './fragments.js';

export const assetmeter: ObjectDef = {
  name: 'ASSETMETER',
  table: 'assetmeter',
  uniqueId: 'assetmeterid',
  // As the deployed systems key a meter: `metername` + `linearassetid`, under the asset.
  keys: ['assetnum', 'siteid', 'metername', 'linearassetid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    uniqueId('assetmeterid', 'Asset Meter ID'),
    ...underAsset,
    keyAttribute('metername', 'Meter', 10),
    { name: 'linearassetid', type: 'BIGINT', title: 'Linear Asset ID', insertOnly: true, defaultValue: 0 },
    { name: 'active', type: 'YORN', title: 'Active', defaultValue: true },
    { name: 'lastreading', type: 'ALN', title: 'Last Reading', length: 18 },
    { name: 'lastreadingdate', type: 'DATETIME', title: 'Last Reading Date' },
    { name: 'measureunitid', type: 'UPPER', title: 'Unit of Measure', length: 16 },
    ...changeTracking,
  ],
};
