import { arch, availableParallelism, cpus, freemem, release, totalmem, type as osType } from 'node:os';
import type { Storage } from '../db/database.js';
import { MAXUPG, PACKAGE_LICENSE, PACKAGE_VERSION, PRODUCT_NAME, RELEASE_LEVEL } from './release.js';
import { deploymentIdentity, type DeploymentIdentity } from './deployment-identity.js';
import { databaseVersion, type DatabaseVersion } from './repository.js';

/**
 * What the service endpoints report about this service and the process that answers (docs/compatibility.md,
 * "Service endpoints"): honest values of this service, in the shapes clients of the deployed systems read.
 * Nothing here is per request but the memory figures; the database version is read once.
 */
export interface SystemFacts {
  serverName: string;
  appServer: string;
  database: { dbProductName: string; dbVersion: string; dbMajorVersion: number; dbMinorVersion: number };
  os: { osName: string; osVersion: string; architecture: string; availableProcessors: number };
  /** One entry per installed product (here: one). */
  versionKeys: string[];
  /** Which deployment answers (docs/migration.md, "Source"). */
  deployment: { id: string; source: string; createdate: string };
}

export interface Product {
  name: string;
  version: string;
  releaseLevel: string;
  maxupg: string;
  license: string;
}

const MB = 1024 * 1024;

export class SystemService {
  private database: Promise<DatabaseVersion> | undefined;
  private identity: Promise<DeploymentIdentity> | undefined;
  readonly startedAt = new Date();

  constructor(
    private readonly storage: Storage,
    readonly serverName: string,
  ) {}

  private databaseVersion(): Promise<DatabaseVersion> {
    this.database ??= databaseVersion(this.storage.db).catch((error: unknown) => {
      this.database = undefined;
      throw error;
    });
    return this.database;
  }

  /** Given once to the database and never changed, so read once. */
  deploymentIdentity(): Promise<DeploymentIdentity> {
    this.identity ??= deploymentIdentity(this.storage.db).catch((error: unknown) => {
      this.identity = undefined;
      throw error;
    });
    return this.identity;
  }

  products(): Product[] {
    return [
      {
        name: PRODUCT_NAME,
        version: PACKAGE_VERSION,
        releaseLevel: RELEASE_LEVEL,
        maxupg: MAXUPG,
        license: PACKAGE_LICENSE,
      },
    ];
  }

  async facts(): Promise<SystemFacts> {
    const [database, identity] = await Promise.all([this.databaseVersion(), this.deploymentIdentity()]);
    const productName = this.storage.kind === 'pglite' ? 'PGlite (PostgreSQL)' : 'PostgreSQL';
    return {
      serverName: this.serverName,
      appServer: `Node.js ${process.version}`,
      database: {
        dbProductName: productName,
        dbVersion: database.version,
        dbMajorVersion: Math.floor(database.versionNumber / 10000),
        dbMinorVersion: database.versionNumber % 10000,
      },
      os: {
        osName: osType(),
        osVersion: release(),
        architecture: arch(),
        availableProcessors: availableParallelism(),
      },
      versionKeys: this.products().map(
        (product) =>
          `${product.name} ${product.version} DB Build V${product.releaseLevel}-${product.version}`,
      ),
      deployment: { id: identity.id, source: identity.source, createdate: identity.createdate.toISOString() },
    };
  }

  /** The JVM document's counterpart: the runtime of this process. `specVersion` is the runtime's version. */
  runtime(): Record<string, unknown> {
    return {
      serverName: this.serverName,
      vmName: 'Node.js',
      vmVendor: 'OpenJS Foundation',
      vmVersion: process.versions.v8,
      specVersion: process.versions.node,
      specName: 'Node.js',
      startTime: this.startedAt.toISOString(),
      uptime: Math.round(process.uptime() * 1000),
      pid: process.pid,
    };
  }

  opsystem(): Record<string, unknown> {
    return {
      serverName: this.serverName,
      name: osType(),
      version: release(),
      arch: arch(),
      availableProcessors: availableParallelism(),
      processors: cpus().length,
    };
  }

  /** Heap and resident memory of this process, in MB (as the deployed systems' `memory` document). */
  memory(): Record<string, unknown> {
    const usage = process.memoryUsage();
    return {
      serverName: this.serverName,
      heapUsed: Math.round(usage.heapUsed / MB),
      heapTotal: Math.round(usage.heapTotal / MB),
      rss: Math.round(usage.rss / MB),
      external: Math.round(usage.external / MB),
      systemFree: Math.round(freemem() / MB),
      systemTotal: Math.round(totalmem() / MB),
    };
  }

  async dbinfo(): Promise<Record<string, unknown>> {
    const facts = await this.facts();
    return { serverName: this.serverName, ...facts.database };
  }
}
