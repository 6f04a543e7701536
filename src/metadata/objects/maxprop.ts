import type { AttributeDef, ObjectDef } from '../types.js';
import { changeTracking, uniqueId } from './fragments.js';

/** A registry attribute: the registry belongs to the release (migrations seed it), so no client writes it. */
const registry = (
  name: string,
  type: AttributeDef['type'],
  title: string,
  length?: number,
): AttributeDef => ({
  name,
  type,
  title,
  ...(length !== undefined && { length }),
  generated: true,
});

/**
 * System properties (docs/properties.md), read through MXAPIPROPERTY so that migration packages can carry their
 * values (docs/migration.md). Values are set only by `wsmethod:setProperty` and deploys, through the property
 * service's rules; writes through the object structure are refused (src/properties/service.ts, `writeRules`).
 */
export const maxprop: ObjectDef = {
  name: 'MAXPROP',
  table: 'maxprop',
  uniqueId: 'maxpropid',
  keys: ['propname'],
  attributes: [
    uniqueId('maxpropid', 'Property ID'),
    { name: 'propname', type: 'ALN', title: 'Property Name', length: 100, required: true, insertOnly: true },
    registry('description', 'ALN', 'Description', 254),
    registry('maxtype', 'ALN', 'Data Type', 8),
    registry('domainid', 'UPPER', 'Domain', 18),
    registry('rangemin', 'INTEGER', 'Minimum'),
    registry('rangemax', 'INTEGER', 'Maximum'),
    registry('maximodefault', 'ALN', 'Default Value', 512),
    registry('globalonly', 'YORN', 'Global Only'),
    registry('instanceonly', 'YORN', 'Instance Only'),
    registry('liverefresh', 'YORN', 'Live Refresh'),
    registry('onlinechanges', 'YORN', 'Online Changes Allowed'),
    registry('encrypted', 'YORN', 'Encrypted'),
    registry('masked', 'YORN', 'Masked'),
    registry('nullsallowed', 'YORN', 'Nulls Allowed'),
    registry('userdefined', 'YORN', 'User Defined'),
    ...changeTracking,
  ],
};

/**
 * The stored values of a property, one per server name (`COMMON`: every server without its own). Only values in
 * clear are attributes: the sealed value of an encrypted property is never read through an object structure.
 */
export const maxpropvalue: ObjectDef = {
  name: 'MAXPROPVALUE',
  table: 'maxpropvalue',
  uniqueId: 'maxpropvalueid',
  keys: ['propname', 'servername'],
  attributes: [
    uniqueId('maxpropvalueid', 'Property Value ID'),
    {
      name: 'propname',
      type: 'ALN',
      title: 'Property Name',
      length: 100,
      required: true,
      insertOnly: true,
      references: { object: 'MAXPROP', on: [['propname', 'propname']] },
    },
    { name: 'servername', type: 'ALN', title: 'Server Name', length: 100, required: true, insertOnly: true },
    { name: 'propvalue', type: 'ALN', title: 'Value', length: 512 },
    ...changeTracking,
  ],
};
