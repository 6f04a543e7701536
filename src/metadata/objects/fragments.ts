import type { AttributeDef, ObjectDef, RelationDef } from '../types.js';

/**
 * Pieces most objects share, so each object file lists only what is its own. A fragment is plain data: spreading
 * it into an object gives the same definition as writing it out.
 */

/** The numeric unique id every object carries, assigned by the database. */
export function uniqueId(name: string, title: string): AttributeDef {
  return { name, type: 'BIGINT', title, generated: true };
}

/** An upper-case key attribute: required, and never changed once inserted. */
export function keyAttribute(
  name: string,
  title: string,
  length: number,
  extra?: Partial<AttributeDef>,
): AttributeDef {
  return { name, type: 'UPPER', title, length, required: true, insertOnly: true, ...extra };
}

export const description: AttributeDef = {
  name: 'description',
  type: 'ALN',
  title: 'Description',
  length: 100,
};

/** Attributes every business object carries: the change stamp kept by the service. */
export const changeTracking: readonly AttributeDef[] = [
  { name: 'changedate', type: 'DATETIME', title: 'Changed Date', generated: true },
  { name: 'changeby', type: 'UPPER', title: 'Changed By', length: 30, generated: true },
];

/** Site and organization of a site-level object: the site must exist, the organization is filled from it. */
export const siteAndOrg: readonly AttributeDef[] = [
  {
    name: 'siteid',
    type: 'UPPER',
    title: 'Site',
    length: 8,
    required: true,
    insertOnly: true,
    references: { object: 'SITE', on: [['siteid', 'siteid']] },
    lookup: { kind: 'table', structure: 'MXAPISITE', where: 'active=1', match: [['orgid', 'orgid']] },
  },
  { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
];

/** The `status` attribute, bound to its domain, with the value a create gets when the client sends none. */
export function status(domainId: string, defaultValue: string, extra?: Partial<AttributeDef>): AttributeDef {
  return { name: 'status', type: 'UPPER', title: 'Status', length: 20, domainId, defaultValue, ...extra };
}

/** The date of the last status change, set by the service. */
export const statusDate: AttributeDef = {
  name: 'statusdate',
  type: 'DATETIME',
  title: 'Status Date',
  generated: true,
};

/** Join pairs of records of the same site: (attribute, attribute of the other object), then the site. */
export function sameSite(attribute: string, other: string): ReadonlyArray<readonly [string, string]> {
  return [
    [attribute, other],
    ['siteid', 'siteid'],
  ];
}

/** The 1:1 `site` relation of a site-level object. */
export const siteRelation: RelationDef = {
  name: 'site',
  object: 'SITE',
  on: [['siteid', 'siteid']],
  many: false,
};

/** A value that must name a location of the record's site. */
export function locationAttribute(extra?: Partial<AttributeDef>): AttributeDef {
  return {
    name: 'location',
    type: 'UPPER',
    title: 'Location',
    length: 12,
    references: { object: 'LOCATIONS', on: sameSite('location', 'location') },
    lookup: { kind: 'table', structure: 'MXAPIOPERLOC', match: [['siteid', 'siteid']] },
    ...extra,
  };
}

/** Attributes of the rows that hang under an asset (specifications, meters). */
export const underAsset: readonly AttributeDef[] = [
  keyAttribute('assetnum', 'Asset', 25),
  keyAttribute('siteid', 'Site', 8),
  { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
];

/** Attributes of the value rows of a domain (ALN, numeric, synonym). */
export function domainValueAttributes(valueType: 'ALN' | 'DECIMAL'): AttributeDef[] {
  return [
    keyAttribute('domainid', 'Domain', 18, {
      references: { object: 'MAXDOMAIN', on: [['domainid', 'domainid']] },
    }),
    { name: 'value', type: valueType, title: 'Value', length: 50, required: true, insertOnly: true },
    description,
    {
      name: 'siteid',
      type: 'UPPER',
      title: 'Site',
      length: 8,
      insertOnly: true,
      references: { object: 'SITE', on: [['siteid', 'siteid']] },
    },
    { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
    { name: 'valueid', type: 'ALN', title: 'Value ID', length: 256, generated: true },
  ];
}

/**
 * A status history (WOSTATUS, ASSETSTATUS): one row per status change of the object keyed by `recordKey`, written by
 * the service, read-only (docs/compatibility.md, "Actions").
 */
export function statusHistory(
  name: string,
  table: string,
  recordKey: AttributeDef,
  statusLength: number,
): ObjectDef {
  return {
    name,
    table,
    uniqueId: `${table}id`,
    keys: [`${table}id`],
    attributes: [
      uniqueId(`${table}id`, 'Status History ID'),
      recordKey,
      keyAttribute('siteid', 'Site', 8),
      { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
      keyAttribute('status', 'Status', statusLength),
      { name: 'changedate', type: 'DATETIME', title: 'Status Date', required: true, insertOnly: true },
      keyAttribute('changeby', 'Changed By', 30),
      { name: 'memo', type: 'ALN', title: 'Memo', length: 254, insertOnly: true },
    ],
  };
}
