import type { Generated } from 'kysely';

/** Row type of the stable page sets (migration 0003-stable-pages). */
interface StableSetTable {
  stableid: string;
  objectstructure: string;
  userid: string;
  total: number;
  created: Generated<Date>;
  lastaccess: Generated<Date>;
}

export interface StablePageTables {
  oslc_stable_set: StableSetTable;
}
