import type { Kysely } from 'kysely';
import { EVERYTHING_CHANGED, type ChangeBus } from '../db/change-bus.js';
import type { DynamicDatabase } from '../db/schema.js';
import { loadSiteOrganizations } from './repository.js';

/** The organization of each site (null: a site without one), by site id. */
export type SiteSnapshot = ReadonlyMap<string, string | null>;

/**
 * The sites and their organizations, which every write of a site-level record validates: held in memory and
 * dropped when any process writes a site (the write path's `object` notification), so that a create need not ask
 * the database (src/oslc/README.md, "Round trips of a write"). Until it listens it holds nothing.
 */
export class SiteCache {
  private current: Promise<SiteSnapshot> | undefined;
  private listening = false;

  constructor(private readonly db: Kysely<DynamicDatabase>) {}

  async listen(bus: ChangeBus): Promise<void> {
    await bus.listen('object', (objectName) => {
      if (objectName === EVERYTHING_CHANGED || objectName === 'SITE') this.current = undefined;
    });
    this.listening = true;
  }

  /** The sites as committed now; nothing when not listening (a site then is looked up by each write). */
  async snapshot(): Promise<SiteSnapshot | undefined> {
    if (!this.listening) return undefined;
    if (!this.current) {
      // Dropped again by a change heard while loading: only waiters that asked before the change see these rows.
      const loading = loadSiteOrganizations(this.db).then(
        (rows) => new Map(rows.map((row) => [row.siteid, row.orgid])),
      );
      this.current = loading;
      loading.catch(() => {
        if (this.current === loading) this.current = undefined;
      });
    }
    return this.current;
  }
}
