import type { ObjectDef } from '../types.js';
import { uniqueId } from './fragments.js';

/**
 * Migration packages, source and target side (docs/migration.md). Written by the migration service only: every
 * attribute is generated, so the object structure reads them and a client cannot write them.
 */
export const dmpackage: ObjectDef = {
  name: 'DMPACKAGE',
  table: 'dmpackage',
  uniqueId: 'dmpackageid',
  keys: ['dmpackageid'],
  attributes: [
    uniqueId('dmpackageid', 'Package ID'),
    ...(
      [
        ['pkgdefname', 'Package Definition', 30],
        ['source', 'Source', 200],
        ['package', 'Package', 60],
        ['type', 'Type', 10],
        ['status', 'Status', 20],
        ['filename', 'File Name', 200],
        ['readme', 'Read Me', 1000],
        ['createby', 'Created By', 30],
        ['changeby', 'Changed By', 30],
        ['progressstatus', 'Progress', 200],
        ['distributionmessage', 'Distribution Message', 1000],
        ['side', 'Side', 6],
      ] as const
    ).map(([name, title, length]) => ({ name, type: 'ALN' as const, title, length, generated: true })),
    // The deployed package an inverse package backs out (docs/migration.md, "Back-out").
    { name: 'inverseof', type: 'BIGINT', title: 'Inverse Of', generated: true },
    { name: 'statusdate', type: 'DATETIME', title: 'Status Date', generated: true },
    { name: 'createdate', type: 'DATETIME', title: 'Created', generated: true },
  ],
};
