import { deploymentIdentity } from '../system/deployment-identity.js';
import { findDeploymentIdentity } from '../system/repository.js';
import { analyzeSchema } from '../db/catalog.js';
import { sql, type Kysely } from 'kysely';
import type { UserProfile } from '../auth/types.js';
import type { Storage } from '../db/database.js';
import { dynamicView, type Database, type DynamicDatabase } from '../db/schema.js';
import { DomainCache } from '../domains/domain-cache.js';
import { MetadataRegistry, type StructureNode } from '../metadata/registry.js';
import { keyValuesOf, ResourceService, type ResourceWriter } from '../oslc/service.js';
import { demoAutokeys, demoOrganizations, demoRecords, type DemoRecords } from './records.js';

/** How many rows of each kind one seeding inserted; all zero when the demo data was already there. */
export interface DemoSummary {
  organizations: number;
  sites: number;
  locations: number;
  assets: number;
  items: number;
  workOrders: number;
  /** Tasks of work orders (work-order rows with a parent), beside `workOrders`. */
  tasks: number;
  /** Service requests (MXAPISR) of both sites. */
  serviceRequests: number;
  /** Status-history rows of work orders, assets and service requests. */
  statusHistory: number;
  assetMeters: number;
  assetSpecs: number;
  persons: number;
  users: number;
  groups: number;
  groupMembers: number;
  groupRights: number;
}

export interface SeedOptions {
  /** The demo users' password, hashed (a hash is what the users' table holds). */
  passwordHash: string;
}

/** The demo records are written by the administrator, as an administrator's client would write them. */
const WRITER: UserProfile = {
  userid: 'MAXADMIN',
  personid: 'MAXADMIN',
  displayname: null,
  status: 'ACTIVE',
  defaultSite: null,
  defaultOrg: null,
  groups: [],
  isAdmin: true,
  adminModeLogin: true,
  rights: new Map(),
  credentialStamp: '',
};

const ORGID = String(demoOrganizations[0]?.orgid);

const emptySummary: DemoSummary = {
  organizations: 0,
  sites: 0,
  locations: 0,
  assets: 0,
  items: 0,
  workOrders: 0,
  tasks: 0,
  serviceRequests: 0,
  statusHistory: 0,
  assetMeters: 0,
  assetSpecs: 0,
  persons: 0,
  users: 0,
  groups: 0,
  groupMembers: 0,
  groupRights: 0,
};

/** The node of the object structure (or of its child collection) the records are written to. */
function nodeOf(metadata: MetadataRegistry, records: DemoRecords): StructureNode {
  const root = metadata.findObjectStructure(records.structure)?.root;
  const node = records.child ? root?.children.find((child) => child.name === records.child) : root;
  if (!node) throw new Error(`Demo data: no ${records.child ?? 'object structure'} in ${records.structure}`);
  return node;
}

/** Writes the records of every file through the batch facility of the write path; answers what it wrote. */
async function writeRecords(
  writer: ResourceWriter,
  metadata: MetadataRegistry,
  passwordHash: string,
): Promise<DemoSummary> {
  const summary: DemoSummary = { ...emptySummary, organizations: demoOrganizations.length };
  for (const file of demoRecords) {
    const node = nodeOf(metadata, file);
    const records = file.records.map((record) => {
      const body = node.object.name === 'MAXUSER' ? { ...record, password: passwordHash } : { ...record };
      return { body, keys: keyValuesOf(node.object, body, {}).values, delete: false };
    });
    await writer.batch().sync(node, records, true, (_index, error) => error);
    count(summary, node, file.records);
  }
  await writer.db
    .insertInto('autokey')
    .values(demoAutokeys.map((record) => ({ ...record })))
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  return summary;
}

const counted: Readonly<Record<string, keyof DemoSummary>> = {
  SITE: 'sites',
  LOCATIONS: 'locations',
  ASSET: 'assets',
  ITEM: 'items',
  WORKORDER: 'workOrders',
  SR: 'serviceRequests',
  ASSETMETER: 'assetMeters',
  ASSETSPEC: 'assetSpecs',
  PERSON: 'persons',
  MAXUSER: 'users',
  MAXGROUP: 'groups',
  GROUPUSER: 'groupMembers',
  OSAUTH: 'groupRights',
};

function count(summary: DemoSummary, node: StructureNode, records: DemoRecords['records']): void {
  const field = counted[node.object.name];
  const tasks =
    node.object.name === 'WORKORDER' ? records.filter((record) => record.istask === true).length : 0;
  if (field) summary[field] += records.length - tasks;
  summary.tasks += tasks;
  // The write path gives each record of an object with a status history its first history row.
  if (node.object.def.statusHistory) summary.statusHistory += records.length;
}

/**
 * The source the demo package definitions name: the deployment's identity (docs/migration.md, "Source"), as every
 * definition made here names it. A database that has none yet (the test fixtures' template, which every copy shares)
 * gets none from the seeding: its definitions name where the database is.
 */
async function databaseSource(db: Kysely<DynamicDatabase>): Promise<string> {
  if (await findDeploymentIdentity(db)) return (await deploymentIdentity(db)).source;
  const identity = await sql<{ source: string }>`
    select coalesce(host(inet_server_addr()) || ':' || inet_server_port()::text, 'localhost') || '/' ||
      current_database() || '/' || current_schema() as source`.execute(db);
  return identity.rows[0]!.source;
}

/** Whether the demo organization is there: a restart with EAS_DEMO=1 then skips hashing the demo password. */
export async function isDemoDataLoaded(db: Kysely<Database>): Promise<boolean> {
  return demoOrganizationExists(dynamicView(db));
}

async function demoOrganizationExists(db: Kysely<DynamicDatabase>): Promise<boolean> {
  const row = await db
    .selectFrom('organization')
    .select('orgid')
    .where('orgid', '=', ORGID)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A resource service of the seeding's own: the write path of every client (conversion, validation, defaults,
 * stamps, status history) without the client-facing write rules (the demo password comes hashed), and with the
 * migration service's one rule of the package definitions: their `source` is this database.
 */
async function demoResources(storage: Storage, metadata: MetadataRegistry): Promise<ResourceService> {
  const resources = new ResourceService(storage, metadata, new DomainCache(dynamicView(storage.db)));
  const source = await databaseSource(dynamicView(storage.db));
  resources.addWriteRules('DMPACKAGEDEF', {
    beforeInsert: async ({ values }) => {
      values.source = source;
    },
  });
  return resources;
}

/**
 * Loads the demo records (`records.ts`) in one transaction of the write path. Runs once: if the demo organization
 * exists nothing is written and the counts are zero.
 */
export async function seedDemoData(storage: Storage, options: SeedOptions): Promise<DemoSummary> {
  const metadata = new MetadataRegistry();
  const resources = await demoResources(storage, metadata);
  const sites = metadata.findObjectStructure('MXAPISITE')!;
  const summary = await resources.writeWith(
    WRITER,
    {},
    async (writer) => {
      const dynamic = writer.db;
      if (await demoOrganizationExists(dynamic)) return { ...emptySummary };
      // The organization row is the claim: a concurrent seeding waits on its key and then backs off.
      const claimed = await dynamic
        .insertInto('organization')
        .values(demoOrganizations.map((record) => ({ ...record })))
        .onConflict((conflict) => conflict.column('orgid').doNothing())
        .returning('orgid')
        .executeTakeFirst();
      if (!claimed) return { ...emptySummary };
      return writeRecords(writer, metadata, options.passwordHash);
    },
    // Only a write with a `transactionid` is recorded with a resource, and this one has none.
    () => ({ structure: sites, uniqueId: 0 }),
  );
  // The demo data is the whole of a new deployment's data: the planner's first statistics are taken of it.
  if (summary.organizations > 0) await analyzeSchema(storage.db);
  return summary;
}
