/**
 * Object metadata: business objects (one table each) and object structures (a root object with child objects),
 * declared as data. Routes, validation, serialization and the query engine are all driven by it, so a new object
 * structure is a new definition, never a new route.
 */

/** Maximo data types, as the data dictionary names them. */
export type MaxType =
  'ALN' | 'UPPER' | 'LOWER' | 'INTEGER' | 'BIGINT' | 'DECIMAL' | 'AMOUNT' | 'YORN' | 'DATE' | 'DATETIME';

export interface ReferenceCheck {
  /** Object whose rows the value must match. */
  object: string;
  /** Pairs of (attribute of this object, attribute of the referenced object); the first pair holds the value. */
  on: ReadonlyArray<readonly [string, string]>;
}

export interface AttributeDef {
  /** Attribute name, lower case; also the column name. */
  name: string;
  type: MaxType;
  title: string;
  length?: number;
  /** Digits after the decimal point of a DECIMAL attribute (its `length` being the digits in all). */
  scale?: number;
  required?: boolean;
  /** Assigned by the database or the service; a client cannot set it. */
  generated?: boolean;
  /** May be set on insert but never changed afterwards (key attributes). */
  insertOnly?: boolean;
  /** Accepted on write, never returned (password). */
  writeOnly?: boolean;
  /** Domain whose values the attribute must take (ALN, SYNONYM or NUMERIC). */
  domainId?: string;
  /** The value must name an existing row of another object (a TABLE domain). */
  references?: ReferenceCheck;
  /** Value used on insert when the client sends none. */
  defaultValue?: string | number | boolean | (() => string | number | boolean | Date);
  /** Value list of `getlist~<attr>` (docs/lookups.md); an attribute with a `domainId` lists its domain without one. */
  lookup?: LookupDef;
  /**
   * Autokey name (`WORKORDERNUM`): when a create leaves the attribute out, the service issues the next number of
   * that name from the `autokey` table (docs/compatibility.md, "Autokeys"). Without a row for the name, the
   * attribute is simply required.
   */
  autokey?: string;
}

/**
 * The value list of an attribute: the values of its domain, or records of another object structure. Served by
 * src/lookups; one definition per attribute, no per-attribute code.
 */
export type LookupDef = DomainLookup | TableLookup;

export interface DomainLookup {
  kind: 'domain';
  /** Domain to list when it is not the attribute's `domainId` (listed as a choice, not enforced on writes). */
  domainId?: string;
  /**
   * Status transitions: internal value (`maxvalue`) of the record's current value → internal values it may move
   * to. With them only those values are listed (never the current value itself); without, every value.
   */
  transitions?: Readonly<Record<string, readonly string[]>>;
}

export interface TableLookup {
  kind: 'table';
  /** Object structure whose members the list holds (their hrefs are that structure's). */
  structure: string;
  /** Fixed condition in the `oslc.where` language on the listed records (`rotating=1`). */
  where?: string;
  /**
   * (attribute of the listed record, value of the record the lookup is for): `siteid = :siteid`. The value is an
   * attribute or a path through 1:1 relations (`site.organization.itemsetid`); while the record has no value the
   * condition does not narrow the list (a list-tab filter on `zombie` sees every site).
   */
  match?: ReadonlyArray<readonly [string, string]>;
  /** (attribute of the listed record, attribute of the record) that must differ: a record is not its own parent. */
  differ?: ReadonlyArray<readonly [string, string]>;
}

export interface RelationDef {
  /** Relation name, lower case, as used in dot notation (`location.description`) and `rel.<name>{...}`. */
  name: string;
  object: string;
  /** Join pairs (attribute of this object, attribute of the related object). */
  on: ReadonlyArray<readonly [string, string]>;
  /** true for 1:n relations (`rel.openwo{...}`), false for 1:1 (`location.description`). */
  many: boolean;
}

export interface ObjectDef {
  /** Object name, upper case, as in the data dictionary (ASSET, LOCATIONS, WORKORDER). */
  name: string;
  table: string;
  /** Numeric unique id attribute (assetuid, locationsid, ...). */
  uniqueId: string;
  /** Primary-key attributes, in rest-id order. */
  keys: readonly string[];
  /** Attribute holding the site (site-level objects); its value must name an existing site. */
  siteAttribute?: string;
  /** Attribute holding the organization, filled from the site when not sent. */
  orgAttribute?: string;
  attributes: readonly AttributeDef[];
  relations?: readonly RelationDef[];
  /**
   * Object whose rows record the status changes of this one (WOSTATUS for WORKORDER): one row per change, with the
   * keys, site, organization, new status, its date, who changed it and the memo (docs/compatibility.md, "Actions").
   */
  statusHistory?: string;
}

export interface ChildDef {
  /** Name of the child collection in JSON, lower case (`alndomain`, `groupuser`). */
  name: string;
  object: string;
  /** Join pairs (attribute of the parent object, attribute of the child object). */
  on: ReadonlyArray<readonly [string, string]>;
  children?: readonly ChildDef[];
  /** Values every child row of this collection gets on insert (tasks: `istask`, `woclass: "ACTIVITY"`). */
  values?: Readonly<Record<string, string | number | boolean>>;
  /**
   * Join values may be null, and a null then matches a null (the work logs of a service request without a site):
   * without it a parent with a null join value has an empty collection, as `=` compares.
   */
  nullSafe?: boolean;
}

/**
 * A named filter of an object structure, applied by `savedQuery=<name>` and listed by `GET /oslc/apimeta/<os>`.
 * The clause is written in the `oslc.where` language and goes through the same parse and plan stages as a
 * client's, so a saved query can never reach what a client's where clause could not.
 */
export interface SavedQueryDef {
  /** Matched case-sensitively, as the deployed systems match it (`OPEN_WORK`). */
  name: string;
  title: string;
  where: string;
}

export interface ObjectStructureDef {
  /** Upper case (MXAPIASSET). */
  name: string;
  aliases?: readonly string[];
  description: string;
  root: string;
  children?: readonly ChildDef[];
  savedQueries?: readonly SavedQueryDef[];
  /** Read by administrators only, whatever rights a group is granted on it (the audit trail, docs/audit.md). */
  adminOnly?: boolean;
}
