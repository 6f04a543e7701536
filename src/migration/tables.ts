import type { Generated } from 'kysely';

/** Tables of migration packages (src/db/migrations/0013-migration-packages.ts). */
export interface DmPackageDefTable {
  dmpackagedefid: Generated<number>;
  pkgdefname: string;
  source: string;
  type: 'CHANGE' | 'SNAPSHOT';
  status: string;
  description: string | null;
  active: boolean;
  xmlaction: 'AddChange' | 'Replace';
  batchsize: number;
  changedate: Date | null;
  changeby: string | null;
}

export interface DmPkgDefContentTable {
  pkgdefname: string;
  objectstructure: string;
  whereclause: string | null;
  cfgdataorder: number;
}

export interface DmPkgDstTrgtTable {
  pkgdefname: string;
  targetname: string;
  type: string;
  url: string | null;
  username: string | null;
  password: string | null;
  schemaname: string | null;
}

export interface DmPackageTable {
  dmpackageid: Generated<number>;
  pkgdefname: string;
  source: string;
  package: string;
  type: string;
  status: string;
  statusdate: Generated<Date>;
  filename: string | null;
  readme: string | null;
  createby: string | null;
  createdate: Generated<Date>;
  changeby: string | null;
  progressstatus: string | null;
  distributionmessage: string | null;
  side: 'SOURCE' | 'TARGET';
  /** The deployed package an inverse package undoes (src/db/migrations/0022-migration-backout.ts). */
  inverseof: Generated<number | null>;
}

export interface DmPkgStagingTable {
  dmpkgstagingid: Generated<number>;
  dmpackageid: number;
  type: string;
  cfgobject: string | null;
  cfgdataorder: number;
  chunk: number;
  cfgobjectcount: number;
  content: string;
}

export interface DmPkgChangeTable {
  dmpkgchangeid: Generated<number>;
  pkgdefname: string;
  objectstructure: string;
  operation: string;
  keyvalues: string;
  changedate: Generated<Date>;
  /** Drift hash of the root before the write; null when it did not exist (src/db/migrations/0015-migration-drift.ts). */
  beforehash: string | null;
}

/** What happened to a package: deploy and back-out, by whom and when (0022-migration-backout.ts). */
export interface DmPkgHistoryTable {
  dmpkghistoryid: Generated<number>;
  dmpackageid: number;
  action: string;
  status: string;
  message: string | null;
  changeby: string;
  changedate: Generated<Date>;
}

/** An attachment a deploy of a package added (migration 0035-migration-attachments). */
export interface DmDeployDoclinkTable {
  dmpackageid: number;
  doclinksid: number;
}

export interface MigrationTables {
  dmpackagedef: DmPackageDefTable;
  dmpkgdefcontent: DmPkgDefContentTable;
  dmpkgdsttrgt: DmPkgDstTrgtTable;
  dmpackage: DmPackageTable;
  dmpkgstaging: DmPkgStagingTable;
  dmpkgchange: DmPkgChangeTable;
  dmpkghistory: DmPkgHistoryTable;
  dmdeploydoclink: DmDeployDoclinkTable;
}
