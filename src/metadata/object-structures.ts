import type { ChildDef, ObjectStructureDef } from './types.js';

/** Tasks of a work order: work-order rows whose `parent` is it, marked as tasks of class ACTIVITY. */
const woactivity: ChildDef = {
  name: 'woactivity',
  object: 'WORKORDER',
  on: [
    ['wonum', 'parent'],
    ['siteid', 'siteid'],
  ],
  values: { istask: true, woclass: 'ACTIVITY' },
};

/**
 * Work logs of a record, joined as the deployed systems' MODIFYWORKLOG relation joins them: the record's key, its
 * class and its site (docs/compatibility.md, "Work logs"). A record whose site may be null (a service request)
 * joins null-safely: its logs are the ones without a site.
 */
function worklog(recordKey: string, recordClass: string, siteOptional = false): ChildDef {
  return {
    name: 'worklog',
    object: 'WORKLOG',
    on: [
      [recordKey, 'recordkey'],
      [recordClass, 'class'],
      ['siteid', 'siteid'],
    ],
    ...(siteOptional && { nullSafe: true }),
  };
}

/** The object structures the service offers; each is served on /oslc/os/<name> and /api/os/<name>. */
export const baseObjectStructures: readonly ObjectStructureDef[] = [
  {
    name: 'MXAPIASSET',
    aliases: ['MXASSET'],
    description: 'Assets',
    root: 'ASSET',
    children: [
      {
        name: 'assetmeter',
        object: 'ASSETMETER',
        on: [
          ['assetnum', 'assetnum'],
          ['siteid', 'siteid'],
        ],
      },
      {
        name: 'assetspec',
        object: 'ASSETSPEC',
        on: [
          ['assetnum', 'assetnum'],
          ['siteid', 'siteid'],
        ],
      },
    ],
    savedQueries: [
      { name: 'OPERATING_ASSETS', title: 'Operating assets', where: 'status="OPERATING"' },
      { name: 'BEDFORD_ASSETS', title: 'Assets of the Bedford site', where: 'siteid="BEDFORD"' },
    ],
  },
  { name: 'MXAPIOPERLOC', aliases: ['MXOPERLOC'], description: 'Operating locations', root: 'LOCATIONS' },
  { name: 'MXAPIITEM', aliases: ['MXITEM'], description: 'Items', root: 'ITEM' },
  {
    name: 'MXAPIWODETAIL',
    aliases: ['MXWO', 'MXWODETAIL'],
    description: 'Work orders',
    root: 'WORKORDER',
    children: [woactivity, worklog('wonum', 'woclass')],
    savedQueries: [
      {
        name: 'OPEN_WORK',
        title: 'Open work orders',
        where: 'status in ["WAPPR","APPR","WSCH","WMATL","INPRG"]',
      },
    ],
  },
  // Service requests (docs/compatibility.md, "Service requests").
  {
    name: 'MXAPISR',
    aliases: ['MXSR'],
    description: 'Service requests',
    root: 'SR',
    children: [worklog('ticketid', 'class', true)],
    savedQueries: [
      { name: 'OPEN_SR', title: 'Open service requests', where: 'status in ["NEW","QUEUED","INPROG"]' },
    ],
  },
  {
    name: 'MXAPIDOMAIN',
    description: 'Domains with their values',
    root: 'MAXDOMAIN',
    children: [
      { name: 'alndomain', object: 'ALNDOMAIN', on: [['domainid', 'domainid']] },
      { name: 'synonymdomain', object: 'SYNONYMDOMAIN', on: [['domainid', 'domainid']] },
      { name: 'numericdomain', object: 'NUMERICDOMAIN', on: [['domainid', 'domainid']] },
    ],
  },
  { name: 'MXAPISYNONYMDOMAIN', description: 'Synonym domain values', root: 'SYNONYMDOMAIN' },
  // ALN and numeric values as members of their own: what lookups list (docs/lookups.md).
  { name: 'MXAPIALNDOMAIN', description: 'ALN domain values', root: 'ALNDOMAIN' },
  { name: 'MXAPINUMERICDOMAIN', description: 'Numeric domain values', root: 'NUMERICDOMAIN' },
  // Organizations and their sites: what a target needs before the records that name them (docs/migration.md,
  // "Setting up a target"); sites are also what the site lookups list.
  {
    name: 'MXAPIORGANIZATION',
    aliases: ['MXORGANIZATION'],
    description: 'Organizations',
    root: 'ORGANIZATION',
  },
  { name: 'MXAPISITE', aliases: ['MXSITE'], description: 'Sites', root: 'SITE' },
  {
    name: 'MXAPIPERUSER',
    aliases: ['MXPERUSER'],
    description: 'People and their user accounts',
    root: 'PERSON',
    children: [
      {
        name: 'maxuser',
        object: 'MAXUSER',
        on: [['personid', 'personid']],
        children: [{ name: 'groupuser', object: 'GROUPUSER', on: [['userid', 'userid']] }],
      },
    ],
  },
  {
    name: 'MXAPIGROUP',
    description: 'Security groups, their members and their rights',
    root: 'MAXGROUP',
    children: [
      { name: 'groupuser', object: 'GROUPUSER', on: [['groupname', 'groupname']] },
      { name: 'osauth', object: 'OSAUTH', on: [['groupname', 'groupname']] },
    ],
  },
  // Administrators' view of API keys (docs/apikeys.md, "MXAPIAPIKEY"); writes follow the rules of src/apikeys.
  { name: 'MXAPIAPIKEY', description: 'API keys', root: 'APIKEYTOKEN' },
  // Migration package definitions and packages (docs/migration.md).
  {
    name: 'MXAPIDMPKGDEF',
    description: 'Migration package definitions',
    root: 'DMPACKAGEDEF',
    children: [
      { name: 'dmpkgdefcontent', object: 'DMPKGDEFCONTENT', on: [['pkgdefname', 'pkgdefname']] },
      { name: 'dmpkgdsttrgt', object: 'DMPKGDSTTRGT', on: [['pkgdefname', 'pkgdefname']] },
    ],
  },
  { name: 'MXAPIDMPACKAGE', description: 'Migration packages', root: 'DMPACKAGE' },
  // The person-and-user structure of the platform's tooling: `maxuser` is one object, not an array (docs/compatibility.md).
  {
    name: 'MASPERUSER',
    description: 'People and their user accounts (platform tooling)',
    root: 'PERSON',
    children: [
      {
        name: 'maxuser',
        object: 'MAXUSER',
        on: [['personid', 'personid']],
        children: [{ name: 'groupuser', object: 'GROUPUSER', on: [['userid', 'userid']] }],
      },
    ],
  },
  // Work orders as the deployed systems serve them beside MXAPIWODETAIL.
  {
    name: 'MXAPIWO',
    description: 'Work orders',
    root: 'WORKORDER',
    children: [woactivity, worklog('wonum', 'woclass')],
  },
  { name: 'MXAPIPERSON', aliases: ['MXPERSON'], description: 'People', root: 'PERSON' },
  // System properties and their values (docs/properties.md): read here, set by setProperty; migration packages
  // carry them (docs/migration.md).
  {
    name: 'MXAPIPROPERTY',
    description: 'System properties and their values',
    root: 'MAXPROP',
    children: [{ name: 'maxpropvalue', object: 'MAXPROPVALUE', on: [['propname', 'propname']] }],
  },
  // Pending changes of custom attributes, applied by "apply configuration changes" (docs/dbconfig.md).
  {
    name: 'MXAPIMAXATTRIBUTECFG',
    description: 'Pending database configuration changes',
    root: 'MAXATTRIBUTECFG',
  },
  // The audit trail and the login tracking, read by administrators only, never written (docs/audit.md).
  { name: 'MXAPIAUDIT', description: 'Audit trail', root: 'EASAUDIT', adminOnly: true },
  {
    name: 'MXAPILOGINTRACKING',
    description: 'Login attempts and logouts',
    root: 'LOGINTRACKING',
    adminOnly: true,
  },
];
