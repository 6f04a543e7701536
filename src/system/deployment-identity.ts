import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { databaseLocation, findDeploymentIdentity, insertDeploymentIdentity } from './repository.js';

/**
 * Who this deployment is (docs/migration.md, "Source"): a random UUID given once, when the first process
 * starts on the database, and kept in it, so two deployments never look alike (two embedded databases alike, both
 * `postgres/public` inside) and a restarted one stays itself. Migration packages name their source by it.
 */
export interface DeploymentIdentity {
  /** The UUID: what tells deployments apart. */
  id: string;
  /**
   * Where the database was when the identity was given, for readers: `host:port/database/schema`, or
   * `machine:data directory` for the embedded database.
   */
  label: string;
  /** `<label> (<id>)`: the `source` of packages and definitions. */
  source: string;
  createdate: Date;
}

/** A label fits the column with room for the UUID in `source` (200 characters). */
const LABEL_LENGTH = 150;

/**
 * The stored identity, given now when the database has none; processes starting together agree on one.
 * `dataDir`: the embedded database's directory, which names it better than PGlite's `postgres/public` (two embedded
 * deployments on one machine differ only by it).
 */
export async function deploymentIdentity<DB>(db: Kysely<DB>, dataDir?: string): Promise<DeploymentIdentity> {
  let stored = await findDeploymentIdentity(db);
  if (!stored) {
    await insertDeploymentIdentity(db, randomUUID(), await locationLabel(db, dataDir));
    stored = await findDeploymentIdentity(db);
    if (!stored) throw new Error('The deployment identity was not stored');
  }
  const id = stored.deploymentid.toLowerCase();
  return { id, label: stored.label, source: `${stored.label} (${id})`, createdate: stored.createdate };
}

async function locationLabel<DB>(db: Kysely<DB>, dataDir: string | undefined): Promise<string> {
  if (dataDir !== undefined) return `${hostname()}:${dataDir}`.slice(0, LABEL_LENGTH);
  const location = await databaseLocation(db);
  // No server address: the embedded engine, or a local socket; the machine's name says more than "localhost".
  const host = location.host === null ? hostname() : `${location.host}:${String(location.port ?? '')}`;
  return `${host}/${location.name}/${location.schema}`.slice(0, LABEL_LENGTH);
}
