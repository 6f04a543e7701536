/**
 * The demo records (README, "Demo data"): one JSON file per kind under `records/`, one record per line, in the
 * order they are written. A record is what a client would send to its object structure: who wrote it and when,
 * status dates and status history are the write path's, as for any client (`seed.ts`).
 */
import assetMeters from './records/asset-meters.json' with { type: 'json' };
import assetSpecs from './records/asset-specs.json' with { type: 'json' };
import assets from './records/assets.json' with { type: 'json' };
import autokeys from './records/autokeys.json' with { type: 'json' };
import groupMembers from './records/group-members.json' with { type: 'json' };
import groupRights from './records/group-rights.json' with { type: 'json' };
import groups from './records/groups.json' with { type: 'json' };
import items from './records/items.json' with { type: 'json' };
import locations from './records/locations.json' with { type: 'json' };
import organizations from './records/organizations.json' with { type: 'json' };
import packageContents from './records/package-contents.json' with { type: 'json' };
import packageDefinitions from './records/package-definitions.json' with { type: 'json' };
import packageTargets from './records/package-targets.json' with { type: 'json' };
import people from './records/people.json' with { type: 'json' };
import serviceRequests from './records/service-requests.json' with { type: 'json' };
import sites from './records/sites.json' with { type: 'json' };
import users from './records/users.json' with { type: 'json' };
import workOrders from './records/work-orders.json' with { type: 'json' };

export type DemoRecord = Readonly<Record<string, unknown>>;

export interface DemoRecords {
  /** The object structure the records are written to, as a client would write them. */
  structure: string;
  /** The child collection of `structure` the records belong to (they carry their parent's key values). */
  child?: string;
  records: readonly DemoRecord[];
}

/**
 * The organization record is the claim of a seeding: written first, on its own, and straight to its table, as no
 * object structure holds organizations.
 */
export const demoOrganizations: readonly DemoRecord[] = organizations;

/**
 * The autokeys the demo sites number their service requests with, from after the ones of the files. No object
 * structure holds autokeys either: written straight to their table, unless the key is there already.
 */
export const demoAutokeys: readonly DemoRecord[] = autokeys;

/** Every other record, in the order written: people before the records naming them, parents before children. */
export const demoRecords: readonly DemoRecords[] = [
  { structure: 'MXAPISITE', records: sites },
  { structure: 'MXAPIPERUSER', records: people },
  { structure: 'MXAPIPERUSER', child: 'maxuser', records: users },
  { structure: 'MXAPIGROUP', records: groups },
  { structure: 'MXAPIGROUP', child: 'groupuser', records: groupMembers },
  { structure: 'MXAPIGROUP', child: 'osauth', records: groupRights },
  { structure: 'MXAPIOPERLOC', records: locations },
  { structure: 'MXAPIASSET', records: assets },
  { structure: 'MXAPIITEM', records: items },
  { structure: 'MXAPIWODETAIL', records: workOrders },
  { structure: 'MXAPISR', records: serviceRequests },
  { structure: 'MXAPIASSET', child: 'assetmeter', records: assetMeters },
  { structure: 'MXAPIASSET', child: 'assetspec', records: assetSpecs },
  { structure: 'MXAPIDMPKGDEF', records: packageDefinitions },
  { structure: 'MXAPIDMPKGDEF', child: 'dmpkgdefcontent', records: packageContents },
  { structure: 'MXAPIDMPKGDEF', child: 'dmpkgdsttrgt', records: packageTargets },
];
