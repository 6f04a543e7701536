import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Storage } from '../db/database.js';
import { isDatabaseError } from '../db/constraint-errors.js';
import { isDatabaseUnavailable } from '../db/faults.js';
import { errors, isMaximoError } from '../errors.js';
import type { MetadataRegistry, ObjectMeta } from '../metadata/registry.js';
import type { AttributeDef } from '../metadata/types.js';
import type { WriteRuleContext, WriteRules } from '../oslc/write-extensions.js';
import { isTextType, toStored, type StoredValue } from '../oslc/values.js';
import {
  addColumn,
  alterColumnType,
  columnExists,
  deleteCustomAttribute,
  deletePendingChanges,
  domainExists,
  dropColumn,
  fillEmptyColumn,
  insertCustomAttribute,
  listCustomAttributes,
  listPendingChanges,
  setColumnRequired,
  updateCustomAttribute,
  upsertPendingChange,
  type ColumnSqlType,
  type CustomAttributeRow,
  type PendingChangeRow,
} from './repository.js';
import type { Database } from '../db/schema.js';
import { typedView } from '../db/schema.js';
import { dbconfigEvent } from '../audit/events.js';
import type { AuditRecorder, RequestOrigin } from '../audit/types.js';

export type { CustomAttributeRow, PendingChangeRow } from './repository.js';

/** Data types a custom attribute may have (docs/dbconfig.md, "Types"). */
export const CUSTOM_TYPES = ['ALN', 'UPPER', 'INTEGER', 'DECIMAL', 'DATE', 'DATETIME', 'YORN'] as const;
export type CustomType = (typeof CUSTOM_TYPES)[number];

export const CHANGE_TYPES = ['ADD', 'CHANGE', 'REMOVE'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** Bus channel of applied configurations; every process reloads its custom attributes when it hears it. */
export const DBCONFIG_CHANNEL = 'dbconfig';

/** Objects whose attributes cannot be configured: the configuration's own. */
const UNCONFIGURABLE = new Set(['MAXATTRIBUTECFG']);

const ATTRIBUTE_NAME = /^[A-Z][A-Z0-9_]{0,29}$/;
const MAX_TEXT_LENGTH = 4000;
const MAX_DECIMAL_PRECISION = 31;
const DEFAULT_DECIMAL = { length: 10, scale: 2 };

/** A change as a caller states it: names and change type, and the properties it sets (null or absent: unset). */
export interface AttributeChange {
  objectname: string;
  attributename: string;
  changetype: string;
  maxtype?: string | null;
  length?: number | null;
  scale?: number | null;
  required?: boolean | null;
  defaultvalue?: string | null;
  domainid?: string | null;
  title?: string | null;
}

/** Admin mode's check before a structural change (src/adminmode): throws BMXAA0578E unless admin mode is on. */
export interface StructuralChangeGuard {
  assertStructuralChangesAllowed(): void | Promise<void>;
}

/** A caller's transaction to work in (a migration package's deploy), on this service's storage. */
export interface InTransaction {
  transaction?: Kysely<Database>;
}

export interface ApplyResult {
  /** The changes carried out, in the order they ran. */
  applied: PendingChangeRow[];
  /** Whether any of them changed a table (and so needed admin mode). */
  structural: boolean;
}

/** A checked change: its normalized row, and the attribute's definition once it is applied (none after REMOVE). */
interface CheckedChange {
  row: PendingChangeRow;
  after: CustomAttributeRow | undefined;
  before: CustomAttributeRow | undefined;
  structural: boolean;
}

export interface DbConfigServiceOptions {
  storage: Storage;
  metadata: MetadataRegistry;
  guard: StructuralChangeGuard;
  log: Pick<FastifyBaseLogger, 'error'>;
  /** Where each apply is recorded, in its transaction (docs/audit.md); default: nowhere. */
  audit?: AuditRecorder;
}

/**
 * Database configuration (docs/dbconfig.md): custom attributes staged as pending changes, applied together in one
 * transaction (DDL, definitions and the bus notification), and made part of the metadata of every process.
 *
 * The API the migration packages build on: `listCustomAttributes`, `stageChanges` and `applyPending`, the last two
 * optionally inside the caller's transaction; after such a transaction commits, the caller calls `refresh()` (other
 * processes hear the bus notification the apply sent inside it).
 */
export class DbConfigService {
  private readonly db: Kysely<Database>;
  private refreshing: Promise<void> = Promise.resolve();

  constructor(private readonly options: DbConfigServiceOptions) {
    this.db = options.storage.db;
  }

  /**
   * Follows every apply of any process, then loads the custom attributes into the metadata (listening first, so an
   * apply committed in between is not missed).
   */
  async start(): Promise<void> {
    await this.options.storage.bus.listen(DBCONFIG_CHANNEL, () => {
      this.refresh().catch((error: unknown) =>
        this.options.log.error({ err: error }, 'could not reload the custom attributes'),
      );
    });
    await this.refresh();
  }

  /** Reads the custom attributes in force and sets them in the metadata (one reload at a time, in order). */
  refresh(): Promise<void> {
    const next = this.refreshing.then(async () => {
      this.options.metadata.setCustomAttributes(byObject(await listCustomAttributes(this.db)));
    });
    this.refreshing = next.catch(() => undefined);
    return next;
  }

  /**
   * The metadata as the caller's transaction sees it, with the custom attributes an apply inside it made, before it
   * commits; the metadata every other reader uses is unchanged until `refresh()`.
   */
  async metadataWithin(transaction: Kysely<Database>): Promise<MetadataRegistry> {
    return this.options.metadata.withCustomAttributes(byObject(await listCustomAttributes(transaction)));
  }

  listCustomAttributes(options: InTransaction = {}): Promise<CustomAttributeRow[]> {
    return listCustomAttributes(this.executor(options));
  }

  listPendingChanges(options: InTransaction = {}): Promise<PendingChangeRow[]> {
    return listPendingChanges(this.executor(options));
  }

  /**
   * Checks and stages changes (each replacing the pending change of its attribute), all or none: the first change
   * that is not valid is refused with its error and nothing is staged.
   */
  async stageChanges(
    changes: readonly AttributeChange[],
    by: string,
    options: InTransaction = {},
  ): Promise<PendingChangeRow[]> {
    const stage = async (db: Kysely<Database>) => {
      const applied = indexApplied(await listCustomAttributes(db));
      const staged: PendingChangeRow[] = [];
      for (const change of changes) {
        const checked = await this.check(db, change, applied);
        const row = { ...checked.row, changeby: by, changedate: new Date() };
        await upsertPendingChange(db, row);
        staged.push(row);
      }
      return staged;
    };
    if (options.transaction) return stage(options.transaction);
    return this.db.transaction().execute(stage);
  }

  /**
   * Applies every pending change in one transaction: the tables' DDL, the definitions, the pending rows removed and
   * the bus notification; any failure leaves tables and definitions as they were. A structural change needs admin
   * mode (the guard), checked before anything is written. `origin`: the request applying, for the audit trail.
   */
  async applyPending(
    by: string,
    options: InTransaction & { origin?: RequestOrigin } = {},
  ): Promise<ApplyResult> {
    const { origin } = options;
    if (options.transaction) return this.applyIn(options.transaction, { by, origin }, false);
    // Admin mode is checked outside the transaction (PGlite holds its one connection for a transaction), from the
    // pending changes as they are now; the transaction checks again should a structural change appear meanwhile.
    const pending = await listPendingChanges(this.db);
    if (pending.length === 0) return { applied: [], structural: false };
    const applied = indexApplied(await listCustomAttributes(this.db));
    const structural = pending.some((row) => isStructural(row, applied.get(keyOf(row))));
    if (structural) await this.options.guard.assertStructuralChangesAllowed();
    const result = await this.db
      .transaction()
      .execute((trx) => this.applyIn(trx, { by, origin }, structural));
    if (result.applied.length > 0) await this.refresh();
    return result;
  }

  /** The write rules of MAXATTRIBUTECFG: a change staged through the object structure is checked like any other. */
  readonly writeRules: WriteRules = {
    beforeInsert: (context) => this.checkWrite(context, {}),
    beforeUpdate: (context) => this.checkWrite(context, context.before),
  };

  private async checkWrite(context: WriteRuleContext, before: Readonly<Record<string, unknown>>) {
    const db = typedView(context.db);
    const record = { ...before, ...context.values } as unknown as AttributeChange;
    const checked = await this.check(db, record, indexApplied(await listCustomAttributes(db)));
    const { changeby: _by, changedate: _date, ...normalized } = checked.row;
    for (const [name, value] of Object.entries(normalized)) {
      if (name in context.values || before[name] !== value) context.values[name] = value as StoredValue;
    }
  }

  private executor(options: InTransaction): Kysely<Database> {
    return options.transaction ?? this.db;
  }

  private async applyIn(
    db: Kysely<Database>,
    { by, origin }: { by: string; origin: RequestOrigin | undefined },
    structuralAllowed: boolean,
  ): Promise<ApplyResult> {
    const pending = await listPendingChanges(db, true);
    if (pending.length === 0) return { applied: [], structural: false };
    const applied = indexApplied(await listCustomAttributes(db));
    const ordered = [...pending].sort(
      (a, b) => ORDER[a.changetype as ChangeType] - ORDER[b.changetype as ChangeType],
    );
    if (!structuralAllowed && ordered.some((row) => isStructural(row, applied.get(keyOf(row))))) {
      await this.options.guard.assertStructuralChangesAllowed();
    }
    let structural = false;
    for (const row of ordered) {
      const checked = await this.check(db, row, applied);
      structural ||= checked.structural;
      await this.carryOut(db, checked, by);
      if (checked.after) applied.set(keyOf(row), checked.after);
      else applied.delete(keyOf(row));
    }
    await deletePendingChanges(db, ordered);
    await this.options.storage.bus.notify(db, DBCONFIG_CHANNEL, 'applied');
    await this.options.audit?.record(db, { ...dbconfigEvent(ordered, structural), origin });
    return { applied: ordered, structural };
  }

  /** The DDL and the definition of one checked change; a refusal of the database names the attribute. */
  private async carryOut(db: Kysely<Database>, change: CheckedChange, by: string): Promise<void> {
    const { row, before, after } = change;
    const object = this.options.metadata.object(row.objectname);
    const column = row.attributename.toLowerCase();
    try {
      if (row.changetype === 'REMOVE') {
        await dropColumn(db, object.table, column);
        await deleteCustomAttribute(db, row.objectname, row.attributename);
        return;
      }
      const target = { ...after!, changeby: by, changedate: new Date() };
      if (row.changetype === 'ADD') {
        await addColumn(db, object.table, column, columnTypeOf(target));
        if (target.required) await this.makeRequired(db, object, column, target);
        await insertCustomAttribute(db, target);
        return;
      }
      if (before!.length !== target.length || before!.scale !== target.scale) {
        await alterColumnType(db, object.table, column, columnTypeOf(target));
      }
      if (before!.required !== target.required) {
        if (target.required) await this.makeRequired(db, object, column, target);
        else await setColumnRequired(db, object.table, column, false);
      }
      await updateCustomAttribute(db, target);
    } catch (error) {
      throw refusalOf(error, row);
    }
  }

  /** Existing rows get the default (when there is one) before the column becomes NOT NULL. */
  private async makeRequired(
    db: Kysely<Database>,
    object: ObjectMeta,
    column: string,
    target: CustomAttributeRow,
  ) {
    if (target.defaultvalue !== null) {
      const converted = toStored(attributeDefOf(target), target.defaultvalue);
      if (converted.ok) await fillEmptyColumn(db, object.table, column, converted.value);
    }
    await setColumnRequired(db, object.table, column, true);
  }

  /** Checks a change against the metadata and the attributes in force; answers its normalized form. */
  private async check(
    db: Kysely<Database>,
    change: AttributeChange,
    applied: ReadonlyMap<string, CustomAttributeRow>,
  ): Promise<CheckedChange> {
    const objectname = String(change.objectname ?? '')
      .trim()
      .toUpperCase();
    const attributename = String(change.attributename ?? '')
      .trim()
      .toUpperCase();
    const object = this.configurable(objectname);
    if (!ATTRIBUTE_NAME.test(attributename)) throw errors.attributeNameNotValid(attributename);
    const changetype = String(change.changetype ?? '').toUpperCase();
    const refuse = (why: string) => errors.attributeChangeNotValid(objectname, attributename, why);
    if (!(CHANGE_TYPES as readonly string[]).includes(changetype)) {
      throw refuse('the change type must be ADD, CHANGE or REMOVE');
    }
    const before = applied.get(`${objectname}.${attributename}`);
    const empty: PendingChangeRow = {
      objectname,
      attributename,
      changetype,
      maxtype: null,
      length: null,
      scale: null,
      required: null,
      defaultvalue: null,
      domainid: null,
      title: null,
      changeby: null,
      changedate: null,
    };
    if (changetype === 'ADD') {
      const column = attributename.toLowerCase();
      if (before || object.attributes.has(column) || (await columnExists(db, object.table, column))) {
        throw errors.attributeExists(objectname, attributename);
      }
      const after = await this.definition(db, refuse, {
        objectname,
        attributename,
        maxtype: String(change.maxtype ?? '').toUpperCase(),
        length: change.length ?? null,
        scale: change.scale ?? null,
        required: change.required ?? false,
        defaultvalue: change.defaultvalue || null,
        domainid: change.domainid ? change.domainid.toUpperCase() : null,
        title: change.title?.trim() || attributename,
        changeby: null,
        changedate: null,
      });
      const { changeby: _by, changedate: _date, ...fields } = after;
      return { row: { ...empty, ...fields, changetype }, after, before, structural: true };
    }
    if (!before) throw errors.notCustomAttribute(objectname, attributename);
    if (changetype === 'REMOVE') return { row: empty, after: undefined, before, structural: true };
    if (change.maxtype && change.maxtype.toUpperCase() !== before.maxtype) {
      throw refuse('the data type of an attribute cannot change; remove it and add it again');
    }
    const after = await this.definition(db, refuse, {
      ...before,
      length: change.length ?? before.length,
      scale: change.scale ?? before.scale,
      required: change.required ?? before.required,
      // Unset (null) keeps the value in force; an empty text clears it.
      defaultvalue: cleared(change.defaultvalue, before.defaultvalue),
      domainid: cleared(change.domainid?.toUpperCase(), before.domainid),
      title: change.title?.trim() || before.title,
    });
    const row: PendingChangeRow = {
      ...empty,
      length: change.length ?? null,
      scale: change.scale ?? null,
      required: change.required ?? null,
      defaultvalue: change.defaultvalue ?? null,
      domainid: change.domainid?.toUpperCase() ?? null,
      title: change.title?.trim() || null,
    };
    return { row, after, before, structural: isStructural(row, before) };
  }

  private configurable(objectname: string): ObjectMeta {
    let object: ObjectMeta;
    try {
      object = this.options.metadata.object(objectname);
    } catch {
      throw errors.objectNotConfigurable(objectname);
    }
    if (UNCONFIGURABLE.has(object.name)) throw errors.objectNotConfigurable(objectname);
    return object;
  }

  /** Checks and completes the definition an attribute will have: type, length and scale, domain, default. */
  private async definition(
    db: Kysely<Database>,
    refuse: (why: string) => Error,
    target: CustomAttributeRow,
  ): Promise<CustomAttributeRow> {
    if (!(CUSTOM_TYPES as readonly string[]).includes(target.maxtype)) {
      throw refuse(`the data type must be one of ${CUSTOM_TYPES.join(', ')}`);
    }
    const type = target.maxtype as CustomType;
    let { length, scale } = target;
    if (type === 'ALN' || type === 'UPPER') {
      if (length === null || !Number.isInteger(length) || length < 1 || length > MAX_TEXT_LENGTH) {
        throw refuse(`a ${type} attribute needs a length from 1 to ${MAX_TEXT_LENGTH}`);
      }
      scale = null;
    } else if (type === 'DECIMAL') {
      length ??= DEFAULT_DECIMAL.length;
      scale ??= DEFAULT_DECIMAL.scale;
      if (!Number.isInteger(length) || length < 1 || length > MAX_DECIMAL_PRECISION) {
        throw refuse(`a DECIMAL attribute needs a length (digits in all) from 1 to ${MAX_DECIMAL_PRECISION}`);
      }
      if (!Number.isInteger(scale) || scale < 0 || scale > length) {
        throw refuse('the scale of a DECIMAL attribute must be from 0 to its length');
      }
    } else {
      length = null;
      scale = null;
    }
    if (target.domainid !== null && !(await domainExists(db, target.domainid))) {
      throw refuse(`the domain ${target.domainid} does not exist`);
    }
    const completed = { ...target, length, scale };
    if (completed.defaultvalue !== null) {
      const converted = toStored(attributeDefOf(completed), completed.defaultvalue);
      if (!converted.ok) throw refuse(`the default value is not a valid ${type} value`);
      if (typeof converted.value === 'string' && length !== null && converted.value.length > length) {
        throw refuse('the default value is longer than the attribute');
      }
    }
    return completed;
  }
}

/** The definitions of custom attribute rows, by object, as the metadata takes them. */
function byObject(rows: readonly CustomAttributeRow[]): Map<string, AttributeDef[]> {
  const grouped = new Map<string, AttributeDef[]>();
  for (const row of rows) {
    const list = grouped.get(row.objectname) ?? [];
    list.push(attributeDefOf(row));
    grouped.set(row.objectname, list);
  }
  return grouped;
}

/** A CHANGE's value of an optional property: null or absent keeps `current`, an empty text clears it. */
function cleared(value: string | null | undefined, current: string | null): string | null {
  if (value === null || value === undefined) return current;
  return value === '' ? null : value;
}

const ORDER: Readonly<Record<ChangeType, number>> = { REMOVE: 0, CHANGE: 1, ADD: 2 };

const keyOf = (row: { objectname: string; attributename: string }) =>
  `${row.objectname.toUpperCase()}.${row.attributename.toUpperCase()}`;

function indexApplied(rows: readonly CustomAttributeRow[]): Map<string, CustomAttributeRow> {
  return new Map(rows.map((row) => [keyOf(row), row]));
}

/**
 * Whether a pending change alters a table (docs/dbconfig.md, "Structural changes"): adding or removing an attribute,
 * or changing its length, scale or whether it is required. Title, default value and domain are not structural.
 */
export function isStructural(
  row: Pick<PendingChangeRow, 'changetype' | 'length' | 'scale' | 'required'>,
  before: CustomAttributeRow | undefined,
): boolean {
  if (row.changetype !== 'CHANGE' || !before) return true;
  return (
    (row.length !== null && row.length !== before.length) ||
    (row.scale !== null && row.scale !== before.scale) ||
    (row.required !== null && row.required !== before.required)
  );
}

/** The metadata of a custom attribute; its column is its name in lower case. */
export function attributeDefOf(row: CustomAttributeRow): AttributeDef {
  const type = row.maxtype as CustomType;
  const def: AttributeDef = {
    name: row.attributename.toLowerCase(),
    type,
    title: row.title,
    ...(isTextType(type) && row.length !== null && { length: row.length }),
    ...(type === 'DECIMAL' && row.scale !== null && { scale: row.scale }),
    ...(row.required && { required: true }),
    ...(row.domainid !== null && { domainId: row.domainid }),
  };
  if (row.defaultvalue !== null) {
    const converted = toStored(def, row.defaultvalue);
    if (converted.ok && converted.value !== null) {
      const value = converted.value;
      def.defaultValue = value instanceof Date ? () => new Date(value) : value;
    }
  }
  return def;
}

function columnTypeOf(row: CustomAttributeRow): ColumnSqlType {
  switch (row.maxtype as CustomType) {
    case 'ALN':
    case 'UPPER':
      return { kind: 'varchar', length: row.length! };
    case 'DECIMAL':
      return { kind: 'numeric', precision: row.length!, scale: row.scale! };
    case 'INTEGER':
      return { kind: 'integer' };
    case 'DATE':
      return { kind: 'date' };
    case 'DATETIME':
      return { kind: 'timestamptz' };
    case 'YORN':
      return { kind: 'boolean' };
  }
}

/** SQLSTATE classes of a change the data refuses (as opposed to a fault of the database, which stays as it is). */
const DATA_REFUSALS: Readonly<Record<string, string>> = {
  '23502': 'rows of the object have no value for it; give it a default value or leave it optional',
  '22001': 'stored values are longer than the new length',
  '22003': 'stored values do not fit the new length and scale',
  '42701': 'the table already has a column of that name',
};

function refusalOf(error: unknown, row: PendingChangeRow): unknown {
  if (isMaximoError(error) || isDatabaseUnavailable(error) || !isDatabaseError(error)) return error;
  const code = String((error as { code?: unknown }).code);
  const why = DATA_REFUSALS[code] ?? 'the database refused the change';
  return errors.configurationNotApplied(row.objectname, row.attributename, row.changetype, why);
}
