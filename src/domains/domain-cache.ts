import type { Kysely } from 'kysely';
import { EVERYTHING_CHANGED, type ChangeBus } from '../db/change-bus.js';
import type { DynamicDatabase } from '../db/schema.js';
import { loadDomainValues, type DomainValueRow } from './repository.js';

export const DOMAIN_OBJECTS: ReadonlySet<string> = new Set([
  'MAXDOMAIN',
  'ALNDOMAIN',
  'SYNONYMDOMAIN',
  'NUMERICDOMAIN',
]);

/** The values of the domains, indexed for validation and `<attr>_description`; read on every response. */
export class DomainSnapshot {
  private readonly byDomain = new Map<string, Map<string, DomainValueRow[]>>();

  constructor(rows: readonly DomainValueRow[]) {
    for (const row of rows) {
      let values = this.byDomain.get(row.domainid);
      if (!values) this.byDomain.set(row.domainid, (values = new Map()));
      const key = normalize(row.value);
      const list = values.get(key);
      if (list) list.push(row);
      else values.set(key, [row]);
    }
  }

  /** The value's row for a record of the given site and organization (a site-specific value wins). */
  find(
    domainId: string,
    value: unknown,
    siteid?: string | null,
    orgid?: string | null,
  ): DomainValueRow | undefined {
    const candidates = this.byDomain.get(domainId)?.get(normalize(value));
    if (!candidates) return undefined;
    let best: DomainValueRow | undefined;
    for (const row of candidates) {
      if (row.siteid !== null && row.siteid !== siteid) continue;
      if (row.orgid !== null && row.orgid !== orgid) continue;
      if (
        !best ||
        (row.siteid !== null && best.siteid === null) ||
        (row.orgid !== null && best.orgid === null)
      ) {
        best = row;
      }
    }
    return best;
  }
}

const normalize = (value: unknown): string => (typeof value === 'number' ? String(value) : String(value));

/**
 * Domain values are read on every response and rarely change: they are held in memory and reloaded when any
 * process writes a domain object (the write path notifies on the `object` channel).
 */
export class DomainCache {
  private current: Promise<DomainSnapshot> | undefined;

  constructor(private readonly db: Kysely<DynamicDatabase>) {}

  async listen(bus: ChangeBus): Promise<void> {
    await bus.listen('object', (objectName) => {
      if (objectName === EVERYTHING_CHANGED || DOMAIN_OBJECTS.has(objectName)) this.current = undefined;
    });
  }

  snapshot(): Promise<DomainSnapshot> {
    this.current ??= loadDomainValues(this.db).then(
      (rows) => new DomainSnapshot(rows),
      (error: unknown) => {
        this.current = undefined;
        throw error;
      },
    );
    return this.current;
  }

  /** Forgets the snapshot; the next read loads the values again. */
  invalidate(): void {
    this.current = undefined;
  }
}
