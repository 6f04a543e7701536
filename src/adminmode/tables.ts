import type { ColumnType, Generated } from 'kysely';

/** Row types of the admin mode tables (migration 0011-adminmode). */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export type AdminModeValue = 0 | 1 | 2;

export interface AdminModeTable {
  adminmodeid: Generated<number>;
  state: AdminModeValue;
  generation: ColumnType<number, number | undefined, number>;
  numsessions: number | null;
  logoutmin: number | null;
  changeby: string | null;
  changedate: Timestamp | null;
  servername: string | null;
  logoutdate: Timestamp | null;
  ondate: Timestamp | null;
}

export type AdminModeAction = 'ON' | 'ACTIVE' | 'OFF';

export interface AdminModeLogTable {
  adminmodelogid: Generated<number>;
  action: AdminModeAction;
  fromstate: AdminModeValue;
  tostate: AdminModeValue;
  numsessions: number | null;
  logoutmin: number | null;
  changeby: string | null;
  changedate: Timestamp;
  servername: string;
  endedsessions: Generated<number>;
}

export interface AdminModeTables {
  adminmode: AdminModeTable;
  adminmodelog: AdminModeLogTable;
}
