import type { Migration } from './migration.js';

/**
 * System properties (docs/properties.md): the registry (MAXPROP), the values per server (MAXPROPVALUE, `COMMON` =
 * every server), the change history, and the value each server process applied and when (the acknowledgement of a
 * refresh). The registry is seeded with every property this service reads; docs/properties.md explains each.
 */

interface PropertySeed {
  propname: string;
  description: string;
  maxtype: 'ALN' | 'INTEGER' | 'YORN';
  maximodefault: string | null;
  rangemin?: number;
  globalonly?: boolean;
  liverefresh?: boolean;
  onlinechanges?: boolean;
  /** Masked (shown as asterisks) to callers who are not administrators. */
  masked?: boolean;
  nullsallowed?: boolean;
}

const seeds: readonly PropertySeed[] = [
  {
    propname: 'mxe.oslc.webappurl',
    description: 'Public address of the OSLC API, for example http://host:7001/maximo/oslc',
    maxtype: 'ALN',
    maximodefault: null,
  },
  {
    propname: 'mxe.oslc.collectioncount',
    description: 'When 1, every collection response carries totalCount and totalPages',
    maxtype: 'YORN',
    maximodefault: '0',
    nullsallowed: false,
  },
  {
    propname: 'mxe.oslc.maxpagesize',
    description: 'Largest page size a collection query may ask for; a larger oslc.pageSize is an error',
    maxtype: 'INTEGER',
    maximodefault: '1000',
    rangemin: 1,
    nullsallowed: false,
  },
  {
    propname: 'mxe.oslc.idleexiry',
    description: 'Seconds after which an idle stable-paging result set expires',
    maxtype: 'INTEGER',
    maximodefault: '300',
    rangemin: 1,
    nullsallowed: false,
  },
  {
    propname: 'mxe.apikeysysusers',
    description: 'Comma-separated user ids that cannot get API keys through the MXAPIAPIKEY object structure',
    maxtype: 'ALN',
    maximodefault: null,
    globalonly: true,
    masked: true,
  },
  {
    propname: 'mxe.apikeyforloggedinuser',
    description: 'When 1, users can create API keys only for themselves',
    maxtype: 'YORN',
    maximodefault: '0',
    globalonly: true,
    nullsallowed: false,
  },
  {
    propname: 'mxe.allowexternalapikey',
    description: 'When 1, API key values generated outside the service are accepted',
    maxtype: 'YORN',
    maximodefault: '0',
    globalonly: true,
    nullsallowed: false,
  },
  {
    propname: 'mxe.secureapikey',
    description: 'When 1, API keys are stored encrypted',
    maxtype: 'YORN',
    maximodefault: '1',
    globalonly: true,
    liverefresh: false,
    onlinechanges: false,
    nullsallowed: false,
  },
  {
    propname: 'mxe.adminmode.numsessions',
    description: 'Number of administrative sessions allowed while admin mode is on',
    maxtype: 'INTEGER',
    maximodefault: '5',
    rangemin: 1,
    globalonly: true,
    nullsallowed: false,
  },
  {
    propname: 'mxe.adminmode.logoutmin',
    description: 'Minutes before users are logged out when admin mode is turned on',
    maxtype: 'INTEGER',
    maximodefault: '5',
    rangemin: 0,
    globalonly: true,
    nullsallowed: false,
  },
  {
    propname: 'mxe.adminmode.stopstartclusters',
    description:
      'When 1, turning admin mode on stops the other server processes and turning it off starts them',
    maxtype: 'YORN',
    maximodefault: '1',
    globalonly: true,
    // Each process decides at start whether it takes part in cluster stops, so a change applies at restart.
    liverefresh: false,
    nullsallowed: false,
  },
  {
    propname: 'mxe.dm.autoapprovepkgdef',
    description:
      'When 1, new package definitions start approved (APPR) instead of waiting for approval (WAPPR)',
    maxtype: 'YORN',
    maximodefault: '0',
    globalonly: true,
    nullsallowed: false,
  },
  {
    propname: 'mxe.useAppServerSecurity',
    description:
      'When 1, users authenticate through the application server (BASIC, FORM) instead of natively',
    maxtype: 'YORN',
    maximodefault: '0',
    liverefresh: false,
    nullsallowed: false,
  },
  {
    propname: 'mxe.sec.IPblock',
    description: 'When 1, an IP address with too many failed logins is blocked',
    maxtype: 'YORN',
    maximodefault: '1',
    nullsallowed: false,
  },
  {
    propname: 'mxe.sec.IPblock.num',
    description:
      'Failed logins from one IP address within mxe.sec.IPblock.sec seconds that block the address',
    maxtype: 'INTEGER',
    maximodefault: '50',
    rangemin: 1,
    masked: true,
    nullsallowed: false,
  },
  {
    propname: 'mxe.sec.IPblock.sec',
    description: 'Length in seconds of the window in which failed logins are counted for IP blocking',
    maxtype: 'INTEGER',
    maximodefault: '30',
    rangemin: 1,
    masked: true,
    nullsallowed: false,
  },
];

/** Migrations run as raw SQL without parameters, so every value is written as a literal. */
function literal(value: string | number | boolean | null): string {
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `'${value.replace(/'/g, "''")}'`;
}

function seedRow(seed: PropertySeed): string {
  const values = [
    seed.propname,
    seed.description,
    seed.maxtype,
    seed.maximodefault,
    seed.rangemin ?? null,
    seed.globalonly ?? false,
    seed.liverefresh ?? true,
    seed.onlinechanges ?? true,
    seed.masked ?? false,
    seed.nullsallowed ?? true,
  ];
  return `(${values.map(literal).join(', ')}, 'MAXADMIN', now())`;
}

export const properties: Migration = {
  name: '0004-properties',
  phase: 'expand',
  statements: [
    `create table maxprop (
       maxpropid integer generated always as identity unique,
       propname varchar(100) primary key,
       description varchar(254),
       maxtype varchar(8) not null check (maxtype in ('ALN', 'INTEGER', 'YORN')),
       domainid varchar(18) references maxdomain(domainid),
       rangemin integer,
       rangemax integer,
       maximodefault varchar(512),
       globalonly boolean not null default false,
       instanceonly boolean not null default false,
       liverefresh boolean not null default true,
       onlinechanges boolean not null default true,
       encrypted boolean not null default false,
       masked boolean not null default false,
       nullsallowed boolean not null default true,
       userdefined boolean not null default false,
       changeby varchar(30),
       changedate timestamptz,
       rowstamp bigint not null,
       check (not (globalonly and instanceonly)))`,
    // One row per property and server; COMMON is the value of every server without its own row.
    `create table maxpropvalue (
       maxpropvalueid integer generated always as identity unique,
       propname varchar(100) not null references maxprop(propname) on delete cascade,
       servername varchar(100) not null,
       propvalue varchar(512),
       encryptedvalue text,
       changeby varchar(30),
       changedate timestamptz,
       rowstamp bigint not null,
       primary key (propname, servername))`,
    // Values of encrypted properties are recorded sealed, as they are stored.
    `create table maxprophistory (
       maxprophistoryid integer generated always as identity primary key,
       propname varchar(100) not null references maxprop(propname) on delete cascade,
       servername varchar(100) not null,
       oldvalue text,
       newvalue text,
       changeby varchar(30) not null,
       changedate timestamptz not null)`,
    `create index maxprophistory_propname on maxprophistory(propname, changedate)`,
    `create table maxpropapplied (
       servername varchar(100) not null,
       propname varchar(100) not null references maxprop(propname) on delete cascade,
       propvalue text,
       appliedat timestamptz not null,
       primary key (servername, propname))`,
    ...['maxprop', 'maxpropvalue'].map(
      (table) =>
        `create trigger ${table}_rowstamp before insert or update on ${table} for each row execute function set_rowstamp()`,
    ),
    `insert into maxprop (propname, description, maxtype, maximodefault, rangemin, globalonly, liverefresh,
       onlinechanges, masked, nullsallowed, changeby, changedate) values
     ${seeds.map(seedRow).join(',\n     ')}`,
  ],
};
