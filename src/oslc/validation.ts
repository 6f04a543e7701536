import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import type { DomainSnapshot } from '../domains/domain-cache.js';
import { errors } from '../errors.js';
import type { MetadataRegistry, ObjectMeta } from '../metadata/registry.js';
import type { AttributeDef } from '../metadata/types.js';
import type { ColumnLimits } from './column-limits.js';
import { exists, findSiteOrganization, type Row } from './repository.js';
import type { SiteSnapshot } from './site-cache.js';
import { isTextType, toStored, type StoredValue } from './values.js';

/**
 * Business validation of one object's attributes on insert and update: types, lengths, read-only keys,
 * domain values, references to other records and required fields, each refused with its own reason code.
 */

/** JSON names that describe a resource rather than set an attribute; they are never written. */
const DESCRIPTIVE =
  /(^(href|localref|_rowstamp|_action|rdf:about|rdf:resource|prefixes)$)|(_collectionref|_description|_maxvalue)$/;

/** Strips the `spi:` prefix of namespaced (lean=0) bodies. */
export const attributeName = (jsonName: string): string =>
  (jsonName.startsWith('spi:') ? jsonName.slice(4) : jsonName).toLowerCase();

export function isDescriptive(jsonName: string): boolean {
  return DESCRIPTIVE.test(jsonName);
}

/** Converts the attributes a client sent; unknown names are passed over, as the deployed systems do. */
export function convertInput(
  object: ObjectMeta,
  input: Readonly<Record<string, unknown>>,
  existing: Readonly<Row> | undefined,
  childNames: ReadonlySet<string>,
): Row {
  const objPath = object.name.toLowerCase();
  const values: Row = {};
  for (const [jsonName, raw] of Object.entries(input)) {
    const name = attributeName(jsonName);
    if (isDescriptive(name) || childNames.has(name)) continue;
    const attribute = object.attributes.get(name);
    if (!attribute || attribute.generated) continue;
    const converted = toStored(attribute, raw);
    if (!converted.ok)
      throw errors.wrongType(attribute.title, display(raw), converted.expected, name, objPath);
    const value = converted.value;
    if (existing && attribute.insertOnly) {
      if (!sameValue(existing[name] ?? null, value))
        throw errors.readOnlyAttribute(attribute.title, name, objPath);
      continue;
    }
    if (
      typeof value === 'string' &&
      attribute.length !== undefined &&
      isTextType(attribute.type) &&
      value.length > attribute.length
    ) {
      throw errors.tooLong(attribute.title, attribute.length, name, objPath);
    }
    values[name] = value;
  }
  return values;
}

function display(raw: unknown): string {
  return typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? String(raw));
}

/** Whether a converted value equals a stored one (dates by instant). */
export function sameValue(left: unknown, right: unknown): boolean {
  if (left instanceof Date && right instanceof Date) return left.getTime() === right.getTime();
  return left === right;
}

/** Fills defaults of attributes the client did not send (insert only). */
export function applyDefaults(object: ObjectMeta, values: Row): void {
  for (const attribute of object.attributes.values()) {
    if (values[attribute.name] !== undefined || attribute.defaultValue === undefined) continue;
    const value =
      typeof attribute.defaultValue === 'function' ? attribute.defaultValue() : attribute.defaultValue;
    values[attribute.name] = value;
  }
}

export interface ValidationContext {
  db: Kysely<DynamicDatabase>;
  metadata: MetadataRegistry;
  domains: DomainSnapshot;
  /** What the columns hold (NOT NULL, ranges, lengths), checked last, before the database would refuse. */
  limits?: ColumnLimits;
  /** Answers the site and reference checks instead of one query each (a batch's memo, src/oslc/batch-writer.ts). */
  lookups?: ReferenceLookups;
  /** The committed sites, when the writer has not written any itself; without it each site is looked up. */
  sites?: SiteSnapshot;
}

/** The two reads validation makes of other records: a site's organization, and whether a referenced row exists. */
export interface ReferenceLookups {
  siteOrganization(siteid: string): Promise<{ orgid: string | null } | undefined>;
  exists(table: string, pairs: ReadonlyArray<readonly [string, StoredValue]>): Promise<boolean>;
}

/**
 * Checks the changed values of a record whose full state after the write is `record`. Site first (it decides
 * the organization and which domain values apply), then domains, references and required fields.
 */
export async function validateRecord(
  context: ValidationContext,
  object: ObjectMeta,
  changed: Readonly<Row>,
  record: Row,
  inserting: boolean,
): Promise<void> {
  const objPath = object.name.toLowerCase();
  const siteAttribute = object.def.siteAttribute;
  if (siteAttribute && typeof changed[siteAttribute] === 'string') {
    const siteid = changed[siteAttribute];
    // A site not in the snapshot may be newer than it (or written by this very transaction): asked for.
    const site = context.lookups
      ? await context.lookups.siteOrganization(siteid)
      : context.sites?.has(siteid)
        ? { orgid: context.sites.get(siteid) ?? null }
        : await findSiteOrganization(context.db, siteid);
    if (!site) throw errors.invalidSite(String(changed[siteAttribute]), objPath);
    const orgAttribute = object.def.orgAttribute;
    if (orgAttribute) {
      if (
        record[orgAttribute] !== undefined &&
        record[orgAttribute] !== null &&
        record[orgAttribute] !== site.orgid
      ) {
        throw errors.invalidReference('Organization', String(record[orgAttribute]), orgAttribute, objPath);
      }
      record[orgAttribute] = site.orgid as string;
    }
  }
  for (const name of Object.keys(changed)) {
    const attribute = object.attributes.get(name);
    const value = record[name];
    if (!attribute || value === null || value === undefined) continue;
    if (attribute.domainId) checkDomain(context.domains, attribute, value, record, objPath);
    if (attribute.references && name !== siteAttribute)
      await checkReference(context, attribute, record, objPath);
  }
  for (const attribute of object.attributes.values()) {
    if (!attribute.required || attribute.generated) continue;
    if (!inserting && !(attribute.name in changed)) continue;
    const value = record[attribute.name];
    if (value === null || value === undefined || value === '') {
      throw errors.requiredField(attribute.title, object.name, attribute.name, objPath);
    }
  }
  context.limits?.check(object, changed);
}

function checkDomain(
  domains: DomainSnapshot,
  attribute: AttributeDef,
  value: unknown,
  record: Row,
  objPath: string,
): void {
  const siteid = typeof record.siteid === 'string' ? record.siteid : null;
  const orgid = typeof record.orgid === 'string' ? record.orgid : null;
  if (!domains.find(attribute.domainId!, value, siteid, orgid)) {
    throw errors.notInValueList(attribute.title, String(value), attribute.name, objPath);
  }
}

async function checkReference(
  context: ValidationContext,
  attribute: AttributeDef,
  record: Row,
  objPath: string,
): Promise<void> {
  const reference = attribute.references!;
  const target = context.metadata.object(reference.object);
  const pairs = reference.on.map(([local, remote]) => [remote, record[local] ?? null] as const);
  if (pairs.some(([, value]) => value === null)) return;
  const found = context.lookups
    ? await context.lookups.exists(target.table, pairs)
    : await exists(context.db, target.table, pairs);
  if (!found) {
    if (reference.object === 'SITE') throw errors.invalidSite(String(record[attribute.name]), objPath);
    throw errors.invalidReference(attribute.title, String(record[attribute.name]), attribute.name, objPath);
  }
}
