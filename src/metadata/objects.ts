import type { AttributeDef, ObjectDef } from './types.js';

/** Attributes every business object carries: the change stamp kept by the service. */
const changeTracking: AttributeDef[] = [
  { name: 'changedate', type: 'DATETIME', title: 'Changed Date', generated: true },
  { name: 'changeby', type: 'UPPER', title: 'Changed By', length: 30, generated: true },
];

const siteAndOrg: AttributeDef[] = [
  {
    name: 'siteid',
    type: 'UPPER',
    title: 'Site',
    length: 8,
    required: true,
    insertOnly: true,
    references: { object: 'SITE', on: [['siteid', 'siteid']] },
    lookup: { kind: 'table', structure: 'MXAPISITE', where: 'active=1', match: [['orgid', 'orgid']] },
  },
  { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
];

export const organization: ObjectDef = {
  name: 'ORGANIZATION',
  table: 'organization',
  uniqueId: 'organizationid',
  keys: ['orgid'],
  attributes: [
    { name: 'organizationid', type: 'BIGINT', title: 'Organization ID', generated: true },
    { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, required: true, insertOnly: true },
    { name: 'description', type: 'ALN', title: 'Description', length: 100 },
    { name: 'itemsetid', type: 'UPPER', title: 'Item Set', length: 8, required: true },
    { name: 'basecurrency', type: 'UPPER', title: 'Base Currency', length: 8, defaultValue: 'USD' },
    { name: 'active', type: 'YORN', title: 'Active', defaultValue: true },
  ],
};

export const site: ObjectDef = {
  name: 'SITE',
  table: 'site',
  uniqueId: 'siteuid',
  keys: ['siteid'],
  attributes: [
    { name: 'siteuid', type: 'BIGINT', title: 'Site ID', generated: true },
    { name: 'siteid', type: 'UPPER', title: 'Site', length: 8, required: true, insertOnly: true },
    {
      name: 'orgid',
      type: 'UPPER',
      title: 'Organization',
      length: 8,
      required: true,
      references: { object: 'ORGANIZATION', on: [['orgid', 'orgid']] },
    },
    { name: 'description', type: 'ALN', title: 'Description', length: 100 },
    { name: 'active', type: 'YORN', title: 'Active', defaultValue: true },
  ],
  relations: [{ name: 'organization', object: 'ORGANIZATION', on: [['orgid', 'orgid']], many: false }],
};

export const person: ObjectDef = {
  name: 'PERSON',
  table: 'person',
  uniqueId: 'personuid',
  keys: ['personid'],
  attributes: [
    { name: 'personuid', type: 'BIGINT', title: 'Person ID', generated: true },
    { name: 'personid', type: 'UPPER', title: 'Person', length: 30, required: true, insertOnly: true },
    { name: 'displayname', type: 'ALN', title: 'Display Name', length: 62 },
    { name: 'firstname', type: 'ALN', title: 'First Name', length: 30 },
    { name: 'lastname', type: 'ALN', title: 'Last Name', length: 30 },
    { name: 'title', type: 'ALN', title: 'Title', length: 62 },
    { name: 'department', type: 'ALN', title: 'Department', length: 30 },
    { name: 'primaryemail', type: 'ALN', title: 'Primary E-mail', length: 100 },
    { name: 'primaryphone', type: 'ALN', title: 'Primary Phone', length: 40 },
    {
      name: 'status',
      type: 'UPPER',
      title: 'Status',
      length: 20,
      domainId: 'PERSONSTATUS',
      defaultValue: 'ACTIVE',
    },
    {
      name: 'locationsite',
      type: 'UPPER',
      title: 'Site',
      length: 8,
      references: { object: 'SITE', on: [['locationsite', 'siteid']] },
    },
    ...changeTracking,
  ],
  relations: [
    { name: 'maxuser', object: 'MAXUSER', on: [['personid', 'personid']], many: false },
    // MASPERUSER's name for the same relation (`oslc.where=user.userid="U"`).
    { name: 'user', object: 'MAXUSER', on: [['personid', 'personid']], many: false },
  ],
};

export const maxuser: ObjectDef = {
  name: 'MAXUSER',
  table: 'maxuser',
  uniqueId: 'maxuserid',
  keys: ['userid'],
  attributes: [
    { name: 'maxuserid', type: 'BIGINT', title: 'User ID', generated: true },
    { name: 'userid', type: 'UPPER', title: 'User', length: 30, required: true, insertOnly: true },
    { name: 'loginid', type: 'UPPER', title: 'Login ID', length: 50 },
    {
      name: 'personid',
      type: 'UPPER',
      title: 'Person',
      length: 30,
      required: true,
      references: { object: 'PERSON', on: [['personid', 'personid']] },
    },
    {
      name: 'status',
      type: 'UPPER',
      title: 'Status',
      length: 20,
      domainId: 'MAXUSERSTATUS',
      defaultValue: 'ACTIVE',
    },
    { name: 'password', type: 'ALN', title: 'Password', length: 128, writeOnly: true },
    { name: 'failedlogins', type: 'INTEGER', title: 'Failed Logins', generated: true },
    {
      name: 'defsite',
      type: 'UPPER',
      title: 'Default Site',
      length: 8,
      references: { object: 'SITE', on: [['defsite', 'siteid']] },
    },
    { name: 'sysuser', type: 'YORN', title: 'System Account', defaultValue: false },
    ...changeTracking,
  ],
  relations: [{ name: 'person', object: 'PERSON', on: [['personid', 'personid']], many: false }],
};

export const maxgroup: ObjectDef = {
  name: 'MAXGROUP',
  table: 'maxgroup',
  uniqueId: 'maxgroupid',
  keys: ['groupname'],
  attributes: [
    { name: 'maxgroupid', type: 'BIGINT', title: 'Group ID', generated: true },
    { name: 'groupname', type: 'UPPER', title: 'Group', length: 30, required: true, insertOnly: true },
    { name: 'description', type: 'ALN', title: 'Description', length: 100 },
    { name: 'adminmodelogin', type: 'YORN', title: 'Can Log In During Admin Mode', defaultValue: false },
    { name: 'authallsites', type: 'YORN', title: 'Authorize Group for All Sites', defaultValue: false },
    ...changeTracking,
  ],
};

export const groupuser: ObjectDef = {
  name: 'GROUPUSER',
  table: 'groupuser',
  uniqueId: 'groupuserid',
  keys: ['groupname', 'userid'],
  attributes: [
    { name: 'groupuserid', type: 'BIGINT', title: 'Group User ID', generated: true },
    {
      name: 'groupname',
      type: 'UPPER',
      title: 'Group',
      length: 30,
      required: true,
      insertOnly: true,
      references: { object: 'MAXGROUP', on: [['groupname', 'groupname']] },
    },
    {
      name: 'userid',
      type: 'UPPER',
      title: 'User',
      length: 30,
      required: true,
      insertOnly: true,
      references: { object: 'MAXUSER', on: [['userid', 'userid']] },
      // People who have a user account; pick `maxuser.userid` (docs/lookups.md).
      lookup: { kind: 'table', structure: 'MXAPIPERUSER', where: 'maxuser.userid="*"' },
    },
  ],
  relations: [{ name: 'maxuser', object: 'MAXUSER', on: [['userid', 'userid']], many: false }],
};

export const maxdomain: ObjectDef = {
  name: 'MAXDOMAIN',
  table: 'maxdomain',
  uniqueId: 'maxdomainid',
  keys: ['domainid'],
  attributes: [
    { name: 'maxdomainid', type: 'BIGINT', title: 'Domain ID', generated: true },
    { name: 'domainid', type: 'UPPER', title: 'Domain', length: 18, required: true, insertOnly: true },
    { name: 'description', type: 'ALN', title: 'Description', length: 100 },
    {
      name: 'domaintype',
      type: 'UPPER',
      title: 'Domain Type',
      length: 10,
      required: true,
      insertOnly: true,
      domainId: 'DOMTYPE',
    },
    {
      name: 'maxtype',
      type: 'UPPER',
      title: 'Data Type',
      length: 8,
      domainId: 'MAXTYPE',
      defaultValue: 'ALN',
    },
    { name: 'length', type: 'INTEGER', title: 'Length', defaultValue: 20 },
    { name: 'scale', type: 'INTEGER', title: 'Scale', defaultValue: 0 },
    ...changeTracking,
  ],
};

const domainValueAttributes = (valueType: 'ALN' | 'DECIMAL'): AttributeDef[] => [
  {
    name: 'domainid',
    type: 'UPPER',
    title: 'Domain',
    length: 18,
    required: true,
    insertOnly: true,
    references: { object: 'MAXDOMAIN', on: [['domainid', 'domainid']] },
  },
  { name: 'value', type: valueType, title: 'Value', length: 50, required: true, insertOnly: true },
  { name: 'description', type: 'ALN', title: 'Description', length: 100 },
  {
    name: 'siteid',
    type: 'UPPER',
    title: 'Site',
    length: 8,
    insertOnly: true,
    references: { object: 'SITE', on: [['siteid', 'siteid']] },
  },
  { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
  { name: 'valueid', type: 'ALN', title: 'Value ID', length: 256, generated: true },
];

export const alndomain: ObjectDef = {
  name: 'ALNDOMAIN',
  table: 'alndomain',
  uniqueId: 'alndomainid',
  keys: ['domainid', 'siteid', 'orgid', 'value'],
  attributes: [
    { name: 'alndomainid', type: 'BIGINT', title: 'ALN Domain ID', generated: true },
    ...domainValueAttributes('ALN'),
  ],
};

export const numericdomain: ObjectDef = {
  name: 'NUMERICDOMAIN',
  table: 'numericdomain',
  uniqueId: 'numericdomainid',
  keys: ['domainid', 'siteid', 'orgid', 'value'],
  attributes: [
    { name: 'numericdomainid', type: 'BIGINT', title: 'Numeric Domain ID', generated: true },
    ...domainValueAttributes('DECIMAL'),
  ],
};

export const synonymdomain: ObjectDef = {
  name: 'SYNONYMDOMAIN',
  table: 'synonymdomain',
  uniqueId: 'synonymdomainid',
  keys: ['domainid', 'maxvalue', 'siteid', 'orgid', 'value'],
  attributes: [
    { name: 'synonymdomainid', type: 'BIGINT', title: 'Synonym Domain ID', generated: true },
    ...domainValueAttributes('ALN'),
    {
      name: 'maxvalue',
      type: 'UPPER',
      title: 'Internal Value',
      length: 50,
      required: true,
      insertOnly: true,
    },
    { name: 'defaults', type: 'YORN', title: 'Default', defaultValue: false },
  ],
};

export const tabledomain: ObjectDef = {
  name: 'TABLEDOMAIN',
  table: 'tabledomain',
  uniqueId: 'tabledomainid',
  keys: ['domainid', 'siteid', 'orgid'],
  attributes: [
    { name: 'tabledomainid', type: 'BIGINT', title: 'Table Domain ID', generated: true },
    {
      name: 'domainid',
      type: 'UPPER',
      title: 'Domain',
      length: 18,
      required: true,
      insertOnly: true,
      references: { object: 'MAXDOMAIN', on: [['domainid', 'domainid']] },
    },
    { name: 'objectname', type: 'UPPER', title: 'Object', length: 30, required: true },
    { name: 'listwhereclause', type: 'ALN', title: 'List Where Clause', length: 4000 },
    { name: 'validtnwhereclause', type: 'ALN', title: 'Validation Where Clause', length: 4000 },
    { name: 'siteid', type: 'UPPER', title: 'Site', length: 8, insertOnly: true },
    { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
  ],
};

export const locations: ObjectDef = {
  name: 'LOCATIONS',
  table: 'locations',
  uniqueId: 'locationsid',
  keys: ['location', 'siteid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    { name: 'locationsid', type: 'BIGINT', title: 'Location ID', generated: true },
    {
      name: 'location',
      type: 'UPPER',
      title: 'Location',
      length: 12,
      required: true,
      insertOnly: true,
      autokey: 'LOCATIONNUM',
    },
    ...siteAndOrg,
    { name: 'description', type: 'ALN', title: 'Description', length: 100 },
    {
      name: 'status',
      type: 'UPPER',
      title: 'Status',
      length: 20,
      domainId: 'LOCASSETSTATUS',
      defaultValue: 'NOT READY',
    },
    { name: 'statusdate', type: 'DATETIME', title: 'Status Date', generated: true },
    {
      name: 'type',
      type: 'UPPER',
      title: 'Type',
      length: 16,
      domainId: 'LOCTYPE',
      defaultValue: 'OPERATING',
    },
    {
      name: 'parent',
      type: 'UPPER',
      title: 'Parent Location',
      length: 12,
      references: {
        object: 'LOCATIONS',
        on: [
          ['parent', 'location'],
          ['siteid', 'siteid'],
        ],
      },
      lookup: {
        kind: 'table',
        structure: 'MXAPIOPERLOC',
        match: [['siteid', 'siteid']],
        differ: [['location', 'location']],
      },
    },
    { name: 'disabled', type: 'YORN', title: 'Disabled', defaultValue: false },
    ...changeTracking,
  ],
  relations: [
    {
      name: 'parentlocation',
      object: 'LOCATIONS',
      on: [
        ['parent', 'location'],
        ['siteid', 'siteid'],
      ],
      many: false,
    },
    {
      name: 'children',
      object: 'LOCATIONS',
      on: [
        ['location', 'parent'],
        ['siteid', 'siteid'],
      ],
      many: true,
    },
    {
      name: 'asset',
      object: 'ASSET',
      on: [
        ['location', 'location'],
        ['siteid', 'siteid'],
      ],
      many: true,
    },
    { name: 'site', object: 'SITE', on: [['siteid', 'siteid']], many: false },
  ],
};

export const item: ObjectDef = {
  name: 'ITEM',
  table: 'item',
  uniqueId: 'itemid',
  keys: ['itemnum', 'itemsetid'],
  attributes: [
    { name: 'itemid', type: 'BIGINT', title: 'Item ID', generated: true },
    { name: 'itemnum', type: 'UPPER', title: 'Item', length: 30, required: true, insertOnly: true },
    { name: 'itemsetid', type: 'UPPER', title: 'Item Set', length: 8, required: true, insertOnly: true },
    { name: 'description', type: 'ALN', title: 'Description', length: 100 },
    {
      name: 'status',
      type: 'UPPER',
      title: 'Status',
      length: 20,
      domainId: 'ITEMSTATUS',
      defaultValue: 'PENDING',
    },
    {
      name: 'commoditygroup',
      type: 'UPPER',
      title: 'Commodity Group',
      length: 8,
      domainId: 'COMMODITYGROUP',
    },
    { name: 'orderunit', type: 'UPPER', title: 'Order Unit', length: 16 },
    { name: 'issueunit', type: 'UPPER', title: 'Issue Unit', length: 16 },
    { name: 'rotating', type: 'YORN', title: 'Rotating', defaultValue: false },
    { name: 'unitcost', type: 'AMOUNT', title: 'Unit Cost' },
    ...changeTracking,
  ],
};

/**
 * Work-order status changes by internal value (`wsmethod:changeStatus`, the `status` lookup): once in progress a
 * work order is not cancelled or sent back for approval, and closed or cancelled work orders stay so.
 */
const woStatusTransitions: Readonly<Record<string, readonly string[]>> = {
  WAPPR: ['APPR', 'WSCH', 'WMATL', 'WPCOND', 'INPRG', 'COMP', 'CAN'],
  APPR: ['WAPPR', 'WSCH', 'WMATL', 'WPCOND', 'INPRG', 'COMP', 'CLOSE', 'CAN'],
  WSCH: ['WAPPR', 'APPR', 'WMATL', 'WPCOND', 'INPRG', 'COMP', 'CLOSE', 'CAN'],
  WMATL: ['WAPPR', 'APPR', 'WSCH', 'WPCOND', 'INPRG', 'COMP', 'CLOSE', 'CAN'],
  WPCOND: ['WAPPR', 'APPR', 'WSCH', 'WMATL', 'INPRG', 'COMP', 'CLOSE', 'CAN'],
  INPRG: ['WSCH', 'WMATL', 'WPCOND', 'COMP', 'CLOSE'],
  COMP: ['CLOSE'],
  CLOSE: [],
  CAN: [],
};

/**
 * Asset status changes by internal value: a decommissioned asset stays decommissioned. Listed by the `status`
 * lookup; synonyms of the current internal value are other statuses too (OPERATING → ACTIVE).
 */
const assetStatusTransitions: Readonly<Record<string, readonly string[]>> = {
  'NOT READY': ['NOT READY', 'OPERATING', 'DECOMMISSIONED'],
  OPERATING: ['OPERATING', 'NOT READY', 'DECOMMISSIONED'],
  DECOMMISSIONED: [],
};

export const asset: ObjectDef = {
  name: 'ASSET',
  table: 'asset',
  uniqueId: 'assetuid',
  keys: ['assetnum', 'siteid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    { name: 'assetuid', type: 'BIGINT', title: 'Asset ID', generated: true },
    {
      name: 'assetnum',
      type: 'UPPER',
      title: 'Asset',
      length: 25,
      required: true,
      insertOnly: true,
      autokey: 'ASSETNUM',
    },
    ...siteAndOrg,
    { name: 'description', type: 'ALN', title: 'Description', length: 100 },
    {
      name: 'status',
      type: 'UPPER',
      title: 'Status',
      length: 20,
      domainId: 'LOCASSETSTATUS',
      defaultValue: 'NOT READY',
      lookup: { kind: 'domain', transitions: assetStatusTransitions },
    },
    { name: 'statusdate', type: 'DATETIME', title: 'Status Date', generated: true },
    { name: 'assettype', type: 'UPPER', title: 'Type', length: 16, domainId: 'ASSETTYPE' },
    {
      name: 'location',
      type: 'UPPER',
      title: 'Location',
      length: 12,
      references: {
        object: 'LOCATIONS',
        on: [
          ['location', 'location'],
          ['siteid', 'siteid'],
        ],
      },
      lookup: { kind: 'table', structure: 'MXAPIOPERLOC', match: [['siteid', 'siteid']] },
    },
    {
      name: 'parent',
      type: 'UPPER',
      title: 'Parent',
      length: 25,
      references: {
        object: 'ASSET',
        on: [
          ['parent', 'assetnum'],
          ['siteid', 'siteid'],
        ],
      },
      lookup: {
        kind: 'table',
        structure: 'MXAPIASSET',
        match: [['siteid', 'siteid']],
        differ: [['assetnum', 'assetnum']],
      },
    },
    { name: 'serialnum', type: 'ALN', title: 'Serial #', length: 64 },
    { name: 'manufacturer', type: 'UPPER', title: 'Manufacturer', length: 12 },
    {
      name: 'itemnum',
      type: 'UPPER',
      title: 'Rotating Item',
      length: 30,
      // Rotating items of the item set of the site's organization.
      lookup: {
        kind: 'table',
        structure: 'MXAPIITEM',
        where: 'rotating=1',
        match: [['itemsetid', 'site.organization.itemsetid']],
      },
    },
    { name: 'purchaseprice', type: 'AMOUNT', title: 'Purchase Price' },
    { name: 'installdate', type: 'DATETIME', title: 'Installation Date' },
    { name: 'priority', type: 'INTEGER', title: 'Priority' },
    { name: 'isrunning', type: 'YORN', title: 'Up', defaultValue: true },
    ...changeTracking,
  ],
  statusHistory: 'ASSETSTATUS',
  relations: [
    {
      name: 'location',
      object: 'LOCATIONS',
      on: [
        ['location', 'location'],
        ['siteid', 'siteid'],
      ],
      many: false,
    },
    {
      name: 'parentasset',
      object: 'ASSET',
      on: [
        ['parent', 'assetnum'],
        ['siteid', 'siteid'],
      ],
      many: false,
    },
    {
      name: 'openwo',
      object: 'WORKORDER',
      on: [
        ['assetnum', 'assetnum'],
        ['siteid', 'siteid'],
      ],
      many: true,
    },
    { name: 'site', object: 'SITE', on: [['siteid', 'siteid']], many: false },
  ],
};

export const workorder: ObjectDef = {
  name: 'WORKORDER',
  table: 'workorder',
  uniqueId: 'workorderid',
  keys: ['wonum', 'siteid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    { name: 'workorderid', type: 'BIGINT', title: 'Work Order ID', generated: true },
    {
      name: 'wonum',
      type: 'UPPER',
      title: 'Work Order',
      length: 25,
      required: true,
      insertOnly: true,
      autokey: 'WORKORDERNUM',
    },
    ...siteAndOrg,
    { name: 'description', type: 'ALN', title: 'Description', length: 100 },
    {
      name: 'status',
      type: 'UPPER',
      title: 'Status',
      length: 16,
      required: true,
      domainId: 'WOSTATUS',
      defaultValue: 'WAPPR',
      lookup: { kind: 'domain', transitions: woStatusTransitions },
    },
    { name: 'statusdate', type: 'DATETIME', title: 'Status Date', generated: true },
    { name: 'worktype', type: 'UPPER', title: 'Work Type', length: 5, domainId: 'WORKTYPE' },
    {
      name: 'assetnum',
      type: 'UPPER',
      title: 'Asset',
      length: 25,
      references: {
        object: 'ASSET',
        on: [
          ['assetnum', 'assetnum'],
          ['siteid', 'siteid'],
        ],
      },
      // Assets of the work order's site, and of its location once one is set.
      lookup: {
        kind: 'table',
        structure: 'MXAPIASSET',
        match: [
          ['siteid', 'siteid'],
          ['location', 'location'],
        ],
      },
    },
    {
      name: 'location',
      type: 'UPPER',
      title: 'Location',
      length: 12,
      references: {
        object: 'LOCATIONS',
        on: [
          ['location', 'location'],
          ['siteid', 'siteid'],
        ],
      },
      lookup: { kind: 'table', structure: 'MXAPIOPERLOC', match: [['siteid', 'siteid']] },
    },
    {
      name: 'wopriority',
      type: 'INTEGER',
      title: 'Priority',
      lookup: { kind: 'domain', domainId: 'WOPRIORITY' },
    },
    {
      name: 'reportedby',
      type: 'UPPER',
      title: 'Reported By',
      length: 30,
      lookup: { kind: 'table', structure: 'MXAPIPERUSER', where: 'status="ACTIVE"' },
    },
    // Filled with the moment of the create when not sent, as the deployed systems do.
    {
      name: 'reportdate',
      type: 'DATETIME',
      title: 'Reported Date',
      defaultValue: () => new Date(),
    },
    { name: 'targstartdate', type: 'DATETIME', title: 'Target Start' },
    { name: 'targcompdate', type: 'DATETIME', title: 'Target Finish' },
    { name: 'estdur', type: 'DECIMAL', title: 'Duration' },
    ...changeTracking,
    { name: 'woclass', type: 'UPPER', title: 'Class', length: 16, required: true, defaultValue: 'WORKORDER' },
    { name: 'historyflag', type: 'YORN', title: 'History', defaultValue: false },
    {
      name: 'parent',
      type: 'UPPER',
      title: 'Parent WO',
      length: 25,
      references: {
        object: 'WORKORDER',
        on: [
          ['parent', 'wonum'],
          ['siteid', 'siteid'],
        ],
      },
    },
    { name: 'istask', type: 'YORN', title: 'Is Task', required: true, defaultValue: false },
    { name: 'taskid', type: 'INTEGER', title: 'Task' },
    { name: 'schedstart', type: 'DATETIME', title: 'Scheduled Start' },
    { name: 'schedfinish', type: 'DATETIME', title: 'Scheduled Finish' },
    { name: 'actstart', type: 'DATETIME', title: 'Actual Start' },
    { name: 'actfinish', type: 'DATETIME', title: 'Actual Finish' },
    { name: 'description_longdescription', type: 'ALN', title: 'Long Description', length: 32000 },
  ],
  statusHistory: 'WOSTATUS',
  relations: [
    {
      name: 'asset',
      object: 'ASSET',
      on: [
        ['assetnum', 'assetnum'],
        ['siteid', 'siteid'],
      ],
      many: false,
    },
    {
      name: 'location',
      object: 'LOCATIONS',
      on: [
        ['location', 'location'],
        ['siteid', 'siteid'],
      ],
      many: false,
    },
    { name: 'site', object: 'SITE', on: [['siteid', 'siteid']], many: false },
    {
      name: 'parentwo',
      object: 'WORKORDER',
      on: [
        ['parent', 'wonum'],
        ['siteid', 'siteid'],
      ],
      many: false,
    },
  ],
};

/**
 * API keys (src/apikeys, docs/apikeys.md). The `apikey` column holds the sealed value; administrators read it
 * decrypted (a read transform of the key service), and writes follow the key service's write rules.
 */
export const apikeytoken: ObjectDef = {
  name: 'APIKEYTOKEN',
  table: 'apikeytoken',
  uniqueId: 'apikeytokenid',
  // One key per user: the user id is the key, so the rest id never carries the key value.
  keys: ['userid'],
  attributes: [
    { name: 'apikeytokenid', type: 'BIGINT', title: 'API Key Token ID', generated: true },
    {
      name: 'userid',
      type: 'UPPER',
      title: 'User',
      length: 30,
      required: true,
      insertOnly: true,
      references: { object: 'MAXUSER', on: [['userid', 'userid']] },
      lookup: { kind: 'table', structure: 'MXAPIPERUSER', where: 'maxuser.userid="*"' },
    },
    { name: 'apikey', type: 'ALN', title: 'API Key', length: 128 },
    { name: 'expiration', type: 'INTEGER', title: 'Token expiry in minutes', required: true },
    { name: 'creationdate', type: 'DATETIME', title: 'Created', generated: true },
    { name: 'clientcert', type: 'YORN', title: 'Client Certificate', defaultValue: false },
    { name: 'exposedinurl', type: 'YORN', title: 'Sent in a URL', generated: true },
    { name: 'exposeddate', type: 'DATETIME', title: 'First Sent in a URL', generated: true },
  ],
  relations: [{ name: 'maxuser', object: 'MAXUSER', on: [['userid', 'userid']], many: false }],
};

/** Rows of a status history (WOSTATUS, ASSETSTATUS): written by the service on every status change, read-only. */
const statusHistory = (
  name: string,
  table: string,
  keyAttribute: AttributeDef,
  statusLength: number,
): ObjectDef => ({
  name,
  table,
  uniqueId: `${table}id`,
  keys: [`${table}id`],
  attributes: [
    { name: `${table}id`, type: 'BIGINT', title: 'Status History ID', generated: true },
    keyAttribute,
    { name: 'siteid', type: 'UPPER', title: 'Site', length: 8, required: true, insertOnly: true },
    { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
    {
      name: 'status',
      type: 'UPPER',
      title: 'Status',
      length: statusLength,
      required: true,
      insertOnly: true,
    },
    { name: 'changedate', type: 'DATETIME', title: 'Status Date', required: true, insertOnly: true },
    { name: 'changeby', type: 'UPPER', title: 'Changed By', length: 30, required: true, insertOnly: true },
    { name: 'memo', type: 'ALN', title: 'Memo', length: 254, insertOnly: true },
  ],
});

export const wostatus: ObjectDef = statusHistory(
  'WOSTATUS',
  'wostatus',
  { name: 'wonum', type: 'UPPER', title: 'Work Order', length: 25, required: true, insertOnly: true },
  16,
);

export const assetstatus: ObjectDef = statusHistory(
  'ASSETSTATUS',
  'assetstatus',
  { name: 'assetnum', type: 'UPPER', title: 'Asset', length: 25, required: true, insertOnly: true },
  20,
);

/** Attributes of the rows that hang under an asset (specifications, meters). */
const underAsset: AttributeDef[] = [
  { name: 'assetnum', type: 'UPPER', title: 'Asset', length: 25, required: true, insertOnly: true },
  { name: 'siteid', type: 'UPPER', title: 'Site', length: 8, required: true, insertOnly: true },
  { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
];

export const assetspec: ObjectDef = {
  name: 'ASSETSPEC',
  table: 'assetspec',
  uniqueId: 'assetspecid',
  keys: ['assetnum', 'siteid', 'assetattrid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    { name: 'assetspecid', type: 'BIGINT', title: 'Asset Specification ID', generated: true },
    ...underAsset,
    { name: 'assetattrid', type: 'UPPER', title: 'Attribute', length: 20, required: true, insertOnly: true },
    { name: 'alnvalue', type: 'ALN', title: 'Alphanumeric Value', length: 254 },
    { name: 'numvalue', type: 'DECIMAL', title: 'Numeric Value' },
    { name: 'measureunitid', type: 'UPPER', title: 'Unit of Measure', length: 16 },
    ...changeTracking,
  ],
};

export const assetmeter: ObjectDef = {
  name: 'ASSETMETER',
  table: 'assetmeter',
  uniqueId: 'assetmeterid',
  // As the deployed systems key a meter: `metername` + `linearassetid`, under the asset.
  keys: ['assetnum', 'siteid', 'metername', 'linearassetid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    { name: 'assetmeterid', type: 'BIGINT', title: 'Asset Meter ID', generated: true },
    ...underAsset,
    { name: 'metername', type: 'UPPER', title: 'Meter', length: 10, required: true, insertOnly: true },
    { name: 'linearassetid', type: 'BIGINT', title: 'Linear Asset ID', insertOnly: true, defaultValue: 0 },
    { name: 'active', type: 'YORN', title: 'Active', defaultValue: true },
    { name: 'lastreading', type: 'ALN', title: 'Last Reading', length: 18 },
    { name: 'lastreadingdate', type: 'DATETIME', title: 'Last Reading Date' },
    { name: 'measureunitid', type: 'UPPER', title: 'Unit of Measure', length: 16 },
    ...changeTracking,
  ],
};

export const baseObjects: readonly ObjectDef[] = [
  organization,
  site,
  person,
  maxuser,
  maxgroup,
  groupuser,
  maxdomain,
  alndomain,
  numericdomain,
  synonymdomain,
  tabledomain,
  locations,
  item,
  asset,
  workorder,
  apikeytoken,
  wostatus,
  assetstatus,
  assetspec,
  assetmeter,
];
