import type { ObjectDef } from '../types.js';
import { changeTracking, description, keyAttribute, uniqueId } from './fragments.js';

/**
 * Migration package definitions (docs/migration.md). `source` names the deployment the definition belongs to: the
 * service fills it from the database identity (a write rule of src/migration).
 */
export const dmpackagedef: ObjectDef = {
  name: 'DMPACKAGEDEF',
  table: 'dmpackagedef',
  uniqueId: 'dmpackagedefid',
  keys: ['pkgdefname'],
  attributes: [
    uniqueId('dmpackagedefid', 'Package Definition ID'),
    keyAttribute('pkgdefname', 'Package Definition', 30),
    { name: 'source', type: 'ALN', title: 'Source', length: 200, generated: true },
    { name: 'type', type: 'UPPER', title: 'Type', length: 10, required: true, insertOnly: true },
    { name: 'status', type: 'UPPER', title: 'Status', length: 10, defaultValue: 'WAPPR' },
    { name: 'statusdate', type: 'DATETIME', title: 'Status Date', generated: true },
    description,
    { name: 'active', type: 'YORN', title: 'Active', defaultValue: false },
    { name: 'xmlaction', type: 'ALN', title: 'Processing Action', length: 10, defaultValue: 'AddChange' },
    { name: 'batchsize', type: 'INTEGER', title: 'Batch Size', defaultValue: 500 },
    ...changeTracking,
  ],
};
