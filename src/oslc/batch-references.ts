import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import type { StructureNode } from '../metadata/registry.js';
import { exists, findSiteOrganization, type Row } from './repository.js';
import type { ReferenceLookups } from './validation.js';
import type { StoredValue } from './values.js';

/** A record of a batch checked and waiting for its insert (src/oslc/batch-writer.ts): its root node and values. */
export interface WaitingRecord {
  node: StructureNode;
  values: Row;
}

/** Positive answers of the reference memo kept before it starts over (a bound on memory, not a tuning knob). */
const MEMO_ENTRIES = 50_000;

/**
 * The reads validation makes of other records, remembered for the batch: a site or reference found once is found
 * again without a query (deletions start the memo over), and a record still waiting for its insert is found among
 * the pending ones, so that a later record may reference an earlier one of the same batch.
 */
export class ReferenceMemo implements ReferenceLookups {
  private readonly found = new Map<string, Row>();

  constructor(
    private readonly db: Kysely<DynamicDatabase>,
    private readonly pending: () => readonly WaitingRecord[],
  ) {}

  clear(): void {
    this.found.clear();
  }

  async siteOrganization(siteid: string): Promise<{ orgid: string | null } | undefined> {
    const pairs = [['siteid', siteid]] as const;
    const known = this.remembered('site', pairs);
    if (known) return { orgid: typeof known.orgid === 'string' ? known.orgid : null };
    const site = await findSiteOrganization(this.db, siteid);
    if (site) this.remember('site', pairs, site);
    return site;
  }

  async exists(table: string, pairs: ReadonlyArray<readonly [string, StoredValue]>): Promise<boolean> {
    if (this.remembered(table, pairs)) return true;
    const found = await exists(this.db, table, pairs);
    if (found) this.remember(table, pairs, {});
    return found;
  }

  private remembered(table: string, pairs: ReadonlyArray<readonly [string, StoredValue]>): Row | undefined {
    const known = this.found.get(memoKey(table, pairs));
    if (known) return known;
    return this.pending().find(
      (entry) =>
        entry.node.object.table === table &&
        pairs.every(([column, value]) => sameValue(entry.values[column] ?? null, value)),
    )?.values;
  }

  private remember(table: string, pairs: ReadonlyArray<readonly [string, StoredValue]>, row: Row): void {
    if (this.found.size >= MEMO_ENTRIES) this.found.clear();
    this.found.set(memoKey(table, pairs), row);
  }
}

const plain = (value: StoredValue | undefined): string | number | boolean | null =>
  value === undefined || value === null ? null : value instanceof Date ? value.toISOString() : value;

const sameValue = (left: StoredValue, right: StoredValue): boolean =>
  left === null || right === null ? left === right : String(plain(left)) === String(plain(right));

/** Key values as text: equal for the values sent and the values stored (numbers and dates compared as text). */
export const keyText = (values: readonly (StoredValue | undefined)[]): string =>
  JSON.stringify(
    values.map((value) => (value === undefined || value === null ? null : String(plain(value)))),
  );

const memoKey = (table: string, pairs: ReadonlyArray<readonly [string, StoredValue]>): string =>
  `${table}\u0000${keyText(pairs.map(([column, value]) => `${column}=${String(plain(value))}`))}`;
