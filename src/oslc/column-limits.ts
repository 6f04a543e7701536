import type { Kysely } from 'kysely';
import { loadColumnCatalog, type ColumnCatalogRow } from '../db/catalog.js';
import type { DynamicDatabase } from '../db/schema.js';
import { errors } from '../errors.js';
import type { ObjectMeta } from '../metadata/registry.js';
import type { Row } from './repository.js';
import { formatDate, isStorableDate } from './values.js';

/** Ranges of the integer column types; `bigint` is limited to the integers a JSON number holds exactly. */
const INTEGER_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  smallint: [-32768, 32767],
  integer: [-2147483648, 2147483647],
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/**
 * What each column can hold, read from the database's own catalog once per process, so that every limit the
 * database enforces (NOT NULL, integer ranges, `numeric(p, s)` digits, `varchar(n)`, dates of the years 0001 to
 * 9999) is checked before the write, with a 400 naming the attribute, whatever migration added the column.
 */
export class ColumnLimits {
  private static loaded = 0;
  /** Tells catalogs apart: a statement compiled from one catalog's columns is kept under its version. */
  readonly version = (ColumnLimits.loaded += 1);
  /** Each table's columns by name: looked up once per value a write sends, without building a key string. */
  private readonly tables = new Map<string, Map<string, ColumnCatalogRow>>();
  private readonly names = new Map<string, readonly string[]>();

  private constructor(rows: readonly ColumnCatalogRow[]) {
    for (const row of rows) {
      let columns = this.tables.get(row.table);
      if (!columns) this.tables.set(row.table, (columns = new Map()));
      columns.set(row.column, row);
    }
    for (const [table, columns] of this.tables) this.names.set(table, [...columns.keys()]);
  }

  static async load<DB>(db: Kysely<DB>): Promise<ColumnLimits> {
    return new ColumnLimits(await loadColumnCatalog(db));
  }

  /** Every column of a table, in the catalog's order (empty for a table it does not know). */
  columnsOf(table: string): readonly string[] {
    return this.names.get(table) ?? [];
  }

  /** The catalog entry of an attribute's column, if the object's table has one of that name. */
  column(object: ObjectMeta, name: string): ColumnCatalogRow | undefined {
    return this.tables.get(object.table)?.get(name);
  }

  /** Whether a number is one the attribute's column holds (a column without a range holds any). */
  fits(object: ObjectMeta, name: string, value: number): boolean {
    const column = this.column(object, name);
    const range = column && numberRange(column);
    return !range || (value >= range[0] && value <= range[1]);
  }

  /** Checks the values about to be written to the object's table (insert: all of them; update: the changed). */
  check(object: ObjectMeta, values: Readonly<Row>): void {
    const objPath = object.name.toLowerCase();
    for (const name of Object.keys(values)) {
      const attribute = object.attributes.get(name);
      const column = this.column(object, name);
      if (!attribute || !column) continue;
      const value = values[name];
      if (value === null || value === undefined) {
        // A NOT NULL column sent as null: the column's default applies only when nothing is sent.
        if (!column.nullable) throw errors.requiredField(attribute.title, object.name, name, objPath);
        continue;
      }
      if (typeof value === 'number') {
        const range = numberRange(column);
        if (range && (value < range[0] || value > range[1])) {
          throw errors.outOfRange(attribute.title, String(value), range, name, objPath);
        }
      } else if (typeof value === 'string') {
        if (column.maxLength !== null && value.length > column.maxLength) {
          throw errors.tooLong(attribute.title, column.maxLength, name, objPath);
        }
      } else if (value instanceof Date && !isStorableDate(value)) {
        throw errors.wrongType(attribute.title, formatDate(value), 'date', name, objPath);
      }
    }
  }
}

/** The inclusive range of numbers a column holds, or undefined when it has none (`numeric` without digits). */
export function numberRange(column: ColumnCatalogRow): readonly [number, number] | undefined {
  const integer = INTEGER_RANGES[column.dataType];
  if (integer) return integer;
  if (column.dataType === 'numeric' && column.precision !== null) {
    const scale = column.scale ?? 0;
    // numeric(10, 2) holds 99999999.99; anything that rounds to 10^8 or beyond overflows.
    const largest = 10 ** (column.precision - scale) - 10 ** -scale;
    return [-largest, largest];
  }
  return undefined;
}

/**
 * The columns' limits, read from the catalog on first use and again after the metadata changed: the schema
 * changes while running only when database configuration is applied (docs/dbconfig.md), which raises the version.
 */
export class CurrentColumnLimits {
  private limits: Promise<ColumnLimits> | undefined;
  private limitsVersion = -1;

  constructor(
    private readonly db: Kysely<DynamicDatabase>,
    private readonly metadata: { readonly version: number },
  ) {}

  current(): Promise<ColumnLimits> {
    if (this.limitsVersion !== this.metadata.version) {
      this.limits = undefined;
      this.limitsVersion = this.metadata.version;
    }
    if (!this.limits) {
      const loading = ColumnLimits.load(this.db);
      this.limits = loading;
      loading.catch(() => {
        if (this.limits === loading) this.limits = undefined;
      });
    }
    return this.limits;
  }
}
