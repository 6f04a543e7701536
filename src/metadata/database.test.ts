import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { openTestStorage } from '../../test/helpers/storage.js';
import type { Storage } from '../db/database.js';
import { attributeDefOf, DbConfigService } from '../dbconfig/service.js';
import { baseObjects } from './objects/index.js';
import { MetadataRegistry } from './registry.js';
import type { AttributeDef, MaxType, ObjectDef } from './types.js';

/**
 * The object definitions against the migrated database (`information_schema.columns`): SQL and metadata are
 * written separately, so this is what keeps them from drifting apart. For every attribute of every object:
 * - its column exists, of the type the attribute's data type is stored as;
 * - a string attribute's length fits the column (a value the service accepts is never cut or refused by it);
 * - a column the database requires (not null, no default, not an identity) is required, generated, defaulted or
 *   numbered by the service, so a create the service accepts never fails on the database.
 * Custom attributes (docs/dbconfig.md) are described by their `maxattribute` rows: one of each data type is applied
 * first, and their columns are held to the same rules.
 */

interface Column {
  table_name: string;
  column_name: string;
  data_type: string;
  character_maximum_length: number | null;
  is_nullable: 'YES' | 'NO';
  column_default: string | null;
  is_identity: 'YES' | 'NO';
}

/** How each data type is stored (src/db/migrations). */
const STORED_AS: Record<MaxType, readonly string[]> = {
  ALN: ['character varying', 'text'],
  UPPER: ['character varying', 'text'],
  LOWER: ['character varying', 'text'],
  INTEGER: ['integer', 'smallint'],
  BIGINT: ['bigint', 'integer'],
  DECIMAL: ['numeric', 'double precision'],
  AMOUNT: ['numeric'],
  YORN: ['boolean'],
  DATE: ['date'],
  DATETIME: ['timestamp with time zone'],
};

/**
 * Not-null columns the service fills itself though a client need not send them: the API key value is issued by the
 * key service (src/apikeys), and status-history rows are written only by the service, organization included.
 */
const FILLED_BY_SERVICE = new Set([
  'apikeytoken.apikey',
  'wostatus.orgid',
  'assetstatus.orgid',
  'tkstatus.orgid',
]);

/**
 * Columns of object tables that are deliberately not attributes, so no request can filter on or write them: the
 * row version every table carries (served only as `_rowstamp` and the ETag), a user's temporary login block (docs/security.md, "Failed
 * logins: temporary blocking") and the digest an API key is found by (docs/apikeys.md, "Storage").
 */
// The sealed value of an encrypted property is never read through an object structure (src/metadata/objects/maxprop.ts).
const INTERNAL_COLUMNS = new Set([
  'rowstamp',
  'maxuser.blockeduntil',
  'apikeytoken.apikeydigest',
  'maxpropvalue.encryptedvalue',
  // The key's site part of a service request, derived by the database (the site or ''): migration 0027.
  'ticket.sitekey',
  'tkstatus.sitekey',
]);

let storage: Storage;
let columns: Map<string, Column>;
/** Every object with its custom attributes, as the metadata serves it. */
let objects: ObjectDef[];

/** One custom attribute of each data type, a required one among them, applied as an administrator would. */
async function applyCustomAttributes(): Promise<ObjectDef[]> {
  const metadata = new MetadataRegistry();
  const dbconfig = new DbConfigService({
    storage,
    metadata,
    // The admin-mode check is not what this file is about: structural changes are allowed.
    guard: { assertStructuralChangesAllowed: () => undefined },
    log: { error: () => undefined },
  });
  const attribute = (attributename: string, maxtype: string, extra: Record<string, unknown> = {}) => ({
    objectname: 'ASSET',
    attributename,
    changetype: 'ADD',
    maxtype,
    ...extra,
  });
  await dbconfig.stageChanges(
    [
      attribute('XALN', 'ALN', { length: 40 }),
      attribute('XUPPER', 'UPPER', { length: 8, required: true, defaultvalue: 'A' }),
      attribute('XINTEGER', 'INTEGER'),
      attribute('XDECIMAL', 'DECIMAL', { length: 8, scale: 3 }),
      attribute('XDATE', 'DATE'),
      attribute('XDATETIME', 'DATETIME'),
      attribute('XYORN', 'YORN', { required: true, defaultvalue: '0' }),
    ],
    'MAXADMIN',
  );
  await dbconfig.applyPending('MAXADMIN');
  const customs = await dbconfig.listCustomAttributes();
  return baseObjects.map((def) => ({
    ...def,
    attributes: [
      ...def.attributes,
      ...customs.filter((row) => row.objectname === def.name).map(attributeDefOf),
    ],
  }));
}

before(async () => {
  storage = await openTestStorage();
  objects = await applyCustomAttributes();
  assert.equal(
    objects.find((def) => def.name === 'ASSET')!.attributes.filter((a) => a.name.startsWith('x')).length,
    7,
  );
  const rows = await sql<Column>`
    select table_name, column_name, data_type, character_maximum_length, is_nullable, column_default, is_identity
      from information_schema.columns
     where table_schema = current_schema()`.execute(storage.db);
  columns = new Map(rows.rows.map((row) => [`${row.table_name}.${row.column_name}`, row]));
});

after(() => storage.close());

function describeColumn(column: Column): string {
  return `${column.data_type}${column.character_maximum_length === null ? '' : `(${column.character_maximum_length})`}`;
}

function problemsOf(def: ObjectDef, attribute: AttributeDef): string[] {
  const where = `${def.table}.${attribute.name}`;
  const column = columns.get(where);
  if (!column) return [`${where}: no column`];
  const problems: string[] = [];
  if (!STORED_AS[attribute.type].includes(column.data_type)) {
    problems.push(`${where}: ${attribute.type} stored as ${describeColumn(column)}`);
  }
  const limit = column.character_maximum_length;
  if (limit !== null && (attribute.length === undefined || attribute.length > limit)) {
    problems.push(`${where}: length ${attribute.length} does not fit ${describeColumn(column)}`);
  }
  const databaseRequires =
    column.is_nullable === 'NO' && column.column_default === null && column.is_identity === 'NO';
  const serviceFills =
    attribute.required === true ||
    attribute.generated === true ||
    attribute.defaultValue !== undefined ||
    attribute.autokey !== undefined ||
    // Filled from the site when not sent.
    attribute.name === def.orgAttribute ||
    FILLED_BY_SERVICE.has(where);
  if (databaseRequires && !serviceFills)
    problems.push(`${where}: not null in the database, optional in metadata`);
  return problems;
}

test('every object has its table', () => {
  const tables = new Set([...columns.values()].map((column) => column.table_name));
  assert.deepEqual(
    objects.filter((def) => !tables.has(def.table)).map((def) => def.name),
    [],
  );
});

test('every attribute of every object has its column, of its type, length and nullability', () => {
  const problems = objects.flatMap((def) =>
    def.attributes.flatMap((attribute) => problemsOf(def, attribute)),
  );
  assert.deepEqual(problems, []);
});

test('every column of an object table is an attribute, or internal on purpose', () => {
  const unknown = objects.flatMap((def) => {
    const attributes = new Set(def.attributes.map((attribute) => attribute.name));
    return [...columns.values()]
      .filter((column) => column.table_name === def.table && !attributes.has(column.column_name))
      .map((column) => `${column.table_name}.${column.column_name}`)
      .filter((name) => !INTERNAL_COLUMNS.has(name) && !INTERNAL_COLUMNS.has(name.split('.')[1]!));
  });
  assert.deepEqual(unknown, []);
});
