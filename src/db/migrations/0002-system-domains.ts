import type { Migration } from './migration.js';

/**
 * The domains every installation needs: the status and type lists the core objects are bound to (see
 * src/metadata/objects/), the data dictionary's own lists, and one numeric and one table domain. All values are
 * system-wide (null siteid and orgid); sites and organizations add their own rows later.
 */

interface DomainHeader {
  domainid: string;
  description: string;
  domaintype: 'ALN' | 'SYNONYM' | 'NUMERIC' | 'TABLE';
  maxtype: string;
  length: number;
  scale?: number;
}

/** [maxvalue, value, description, defaults] */
type SynonymValue = readonly [string, string, string, boolean];
/** [value, description] */
type AlnValue = readonly [string, string];
type NumericValue = readonly [number, string];

const synonymDomains: ReadonlyArray<{ header: DomainHeader; values: readonly SynonymValue[] }> = [
  {
    header: {
      domainid: 'LOCASSETSTATUS',
      description: 'Asset and location status',
      domaintype: 'SYNONYM',
      maxtype: 'UPPER',
      length: 20,
    },
    values: [
      ['NOT READY', 'NOT READY', 'Not Ready', true],
      ['OPERATING', 'OPERATING', 'Operating', true],
      ['DECOMMISSIONED', 'DECOMMISSIONED', 'Decommissioned', true],
      ['OPERATING', 'ACTIVE', 'Active', false],
      ['NOT READY', 'BROKEN', 'Broken', false],
      ['NOT READY', 'INSTALLING', 'Being Installed', false],
      ['DECOMMISSIONED', 'SCRAPPED', 'Scrapped', false],
    ],
  },
  {
    header: {
      domainid: 'LOCTYPE',
      description: 'Location type',
      domaintype: 'SYNONYM',
      maxtype: 'UPPER',
      length: 16,
    },
    values: [
      ['OPERATING', 'OPERATING', 'Operating Location', true],
      ['STOREROOM', 'STOREROOM', 'Storeroom', true],
      ['REPAIR', 'REPAIR', 'Repair Facility', true],
      ['SALVAGE', 'SALVAGE', 'Salvage Yard', true],
      ['VENDOR', 'VENDOR', 'Vendor Location', true],
      ['LABOR', 'LABOR', 'Labor Location', true],
      ['COURIER', 'COURIER', 'Courier Location', true],
      ['HOLDING', 'HOLDING', 'Holding Location', true],
    ],
  },
  {
    header: {
      domainid: 'WOSTATUS',
      description: 'Work order status',
      domaintype: 'SYNONYM',
      maxtype: 'UPPER',
      length: 16,
    },
    values: [
      ['WAPPR', 'WAPPR', 'Waiting on Approval', true],
      ['APPR', 'APPR', 'Approved', true],
      ['WSCH', 'WSCH', 'Waiting to be Scheduled', true],
      ['WMATL', 'WMATL', 'Waiting on Material', true],
      ['WPCOND', 'WPCOND', 'Waiting on Plant Condition', true],
      ['INPRG', 'INPRG', 'In Progress', true],
      ['COMP', 'COMP', 'Completed', true],
      ['CLOSE', 'CLOSE', 'Closed', true],
      ['CAN', 'CAN', 'Canceled', true],
    ],
  },
  {
    header: {
      domainid: 'ITEMSTATUS',
      description: 'Item status',
      domaintype: 'SYNONYM',
      maxtype: 'UPPER',
      length: 20,
    },
    values: [
      ['PENDING', 'PENDING', 'Pending', true],
      ['PLANNING', 'PLANNING', 'Planning', true],
      ['ACTIVE', 'ACTIVE', 'Active', true],
      ['PENDOBS', 'PENDOBS', 'Pending Obsolescence', true],
      ['OBSOLETE', 'OBSOLETE', 'Obsolete', true],
    ],
  },
  {
    header: {
      domainid: 'MAXUSERSTATUS',
      description: 'User status',
      domaintype: 'SYNONYM',
      maxtype: 'UPPER',
      length: 20,
    },
    values: [
      ['ACTIVE', 'ACTIVE', 'Active', true],
      ['INACTIVE', 'INACTIVE', 'Inactive', true],
      ['BLOCKED', 'BLOCKED', 'Blocked', true],
      ['DELETED', 'DELETED', 'Deleted', true],
      ['NEWREG', 'NEWREG', 'New Registration', true],
    ],
  },
  {
    header: {
      domainid: 'PERSONSTATUS',
      description: 'Person status',
      domaintype: 'SYNONYM',
      maxtype: 'UPPER',
      length: 20,
    },
    values: [
      ['ACTIVE', 'ACTIVE', 'Active', true],
      ['INACTIVE', 'INACTIVE', 'Inactive', true],
    ],
  },
];

const alnDomains: ReadonlyArray<{ header: DomainHeader; values: readonly AlnValue[] }> = [
  {
    header: {
      domainid: 'ASSETTYPE',
      description: 'Asset type',
      domaintype: 'ALN',
      maxtype: 'UPPER',
      length: 16,
    },
    values: [
      ['FACILITIES', 'Facilities'],
      ['FLEET', 'Fleet'],
      ['IT', 'Information Technology'],
      ['PRODUCTION', 'Production'],
      ['TRANSPORTATION', 'Transportation'],
    ],
  },
  {
    header: {
      domainid: 'WORKTYPE',
      description: 'Work type',
      domaintype: 'ALN',
      maxtype: 'UPPER',
      length: 5,
    },
    values: [
      ['CM', 'Corrective Maintenance'],
      ['PM', 'Preventive Maintenance'],
      ['EM', 'Emergency Maintenance'],
      ['CP', 'Capital Project'],
      ['EV', 'Event'],
    ],
  },
  {
    header: {
      domainid: 'COMMODITYGROUP',
      description: 'Commodity group',
      domaintype: 'ALN',
      maxtype: 'UPPER',
      length: 8,
    },
    values: [
      ['4100', 'Electrical'],
      ['4200', 'Mechanical'],
      ['4300', 'Plumbing'],
      ['4400', 'HVAC'],
      ['4500', 'Safety'],
    ],
  },
  {
    header: {
      domainid: 'DOMTYPE',
      description: 'Domain type',
      domaintype: 'ALN',
      maxtype: 'UPPER',
      length: 10,
    },
    values: [
      ['ALN', 'Alphanumeric domain'],
      ['SYNONYM', 'Synonym domain'],
      ['NUMERIC', 'Numeric domain'],
      ['TABLE', 'Table domain'],
    ],
  },
  {
    header: {
      domainid: 'MAXTYPE',
      description: 'Attribute data type',
      domaintype: 'ALN',
      maxtype: 'UPPER',
      length: 8,
    },
    values: [
      ['ALN', 'Alphanumeric, mixed case'],
      ['UPPER', 'Alphanumeric, upper case'],
      ['LOWER', 'Alphanumeric, lower case'],
      ['INTEGER', 'Integer'],
      ['BIGINT', 'Big integer'],
      ['DECIMAL', 'Decimal'],
      ['AMOUNT', 'Currency amount'],
      ['YORN', 'Yes or no'],
      ['DATE', 'Date'],
      ['DATETIME', 'Date and time'],
    ],
  },
];

const numericDomains: ReadonlyArray<{ header: DomainHeader; values: readonly NumericValue[] }> = [
  {
    header: {
      domainid: 'WOPRIORITY',
      description: 'Work order priority',
      domaintype: 'NUMERIC',
      maxtype: 'INTEGER',
      length: 12,
      scale: 0,
    },
    values: [
      [1, 'Emergency'],
      [2, 'Urgent'],
      [3, 'High'],
      [4, 'Medium'],
      [5, 'Low'],
    ],
  },
];

const tableDomains: ReadonlyArray<{ header: DomainHeader; objectname: string; listwhereclause: string }> = [
  {
    header: {
      domainid: 'LOCATIONLIST',
      description: 'Locations of the current site',
      domaintype: 'TABLE',
      maxtype: 'UPPER',
      length: 12,
    },
    objectname: 'LOCATIONS',
    listwhereclause: 'siteid = :siteid',
  },
];

/** Migrations run as raw SQL without parameters, so every value is written as a literal. */
function literal(value: string | number | boolean | null): string {
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `'${value.replace(/'/g, "''")}'`;
}

function row(values: ReadonlyArray<string | number | boolean | null>): string {
  return `(${values.map(literal).join(', ')})`;
}

const headers: DomainHeader[] = [
  ...synonymDomains.map((domain) => domain.header),
  ...alnDomains.map((domain) => domain.header),
  ...numericDomains.map((domain) => domain.header),
  ...tableDomains.map((domain) => domain.header),
];

/** Ids of the domains this migration creates: the base object definitions may bind attributes only to these. */
export const systemDomainIds: readonly string[] = headers.map((header) => header.domainid);

export const systemDomains: Migration = {
  name: '0002-system-domains',
  phase: 'expand',
  statements: [
    `insert into maxdomain (domainid, description, domaintype, maxtype, length, scale, changedate, changeby) values
     ${headers
       .map(
         (header) =>
           `(${[
             header.domainid,
             header.description,
             header.domaintype,
             header.maxtype,
             header.length,
             header.scale ?? 0,
           ]
             .map(literal)
             .join(', ')}, current_timestamp, 'MAXADMIN')`,
       )
       .join(',\n     ')}`,
    `insert into synonymdomain (domainid, maxvalue, value, description, defaults, valueid) values
     ${synonymDomains
       .flatMap(({ header, values }) =>
         values.map(([maxvalue, value, description, defaults]) =>
           row([header.domainid, maxvalue, value, description, defaults, `${header.domainid}|${value}`]),
         ),
       )
       .join(',\n     ')}`,
    `insert into alndomain (domainid, value, description, valueid) values
     ${alnDomains
       .flatMap(({ header, values }) =>
         values.map(([value, description]) =>
           row([header.domainid, value, description, `${header.domainid}|${value}`]),
         ),
       )
       .join(',\n     ')}`,
    `insert into numericdomain (domainid, value, description, valueid) values
     ${numericDomains
       .flatMap(({ header, values }) =>
         values.map(([value, description]) =>
           row([header.domainid, value, description, `${header.domainid}|${value}`]),
         ),
       )
       .join(',\n     ')}`,
    `insert into tabledomain (domainid, objectname, listwhereclause) values
     ${tableDomains.map((domain) => row([domain.header.domainid, domain.objectname, domain.listwhereclause])).join(',\n     ')}`,
  ],
};
