import type { AttributeDef, ObjectDef } from '../types.js';
import {
  changeTracking,
  description,
  keyAttribute,
  locationAttribute,
  sameSite,
  siteAndOrg,
  siteRelation,
  status,
  statusDate,
  uniqueId,
} from './fragments.js';

/**
 * Service-request status changes by internal value (`wsmethod:changeStatus`, the `status` lookup): a request moves
 * forward through the queue, a resolved one may be reopened, and a closed one stays closed.
 */
const srStatusTransitions: Readonly<Record<string, readonly string[]>> = {
  NEW: ['QUEUED', 'INPROG', 'RESOLVED', 'CLOSED'],
  QUEUED: ['INPROG', 'RESOLVED', 'CLOSED'],
  INPROG: ['QUEUED', 'RESOLVED', 'CLOSED'],
  RESOLVED: ['INPROG', 'CLOSED'],
  CLOSED: [],
};

/** A person named on the request (who reported it, who is affected): an existing, active person. */
function personAttribute(name: string, title: string): AttributeDef {
  return {
    name,
    type: 'UPPER',
    title,
    length: 30,
    references: { object: 'PERSON', on: [[name, 'personid']] },
    lookup: { kind: 'table', structure: 'MXAPIPERSON', where: 'status="ACTIVE"' },
  };
}

/**
 * Service requests: tickets of class SR, numbered per site, or by the system row when without a site
 * (docs/compatibility.md, "Service requests").
 */
export const sr: ObjectDef = {
  name: 'SR',
  table: 'ticket',
  uniqueId: 'ticketuid',
  keys: ['ticketid', 'siteid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    uniqueId('ticketuid', 'Ticket ID'),
    keyAttribute('ticketid', 'Service Request', 15, { autokey: 'TICKETID' }),
    // A request need not name a site (docs/compatibility.md, "Service requests"): the key's site part is then null.
    { ...siteAndOrg[0]!, required: false },
    ...siteAndOrg.slice(1),
    { name: 'class', type: 'UPPER', title: 'Class', length: 16, insertOnly: true, defaultValue: 'SR' },
    description,
    { name: 'description_longdescription', type: 'ALN', title: 'Long Description', length: 32000 },
    status('SRSTATUS', 'NEW', { lookup: { kind: 'domain', transitions: srStatusTransitions } }),
    statusDate,
    personAttribute('reportedby', 'Reported By'),
    // Filled with the moment of the create when not sent, as for work orders.
    { name: 'reportdate', type: 'DATETIME', title: 'Reported Date', defaultValue: () => new Date() },
    personAttribute('affectedperson', 'Affected Person'),
    {
      name: 'assetnum',
      type: 'UPPER',
      title: 'Asset',
      length: 25,
      references: { object: 'ASSET', on: sameSite('assetnum', 'assetnum') },
      lookup: {
        kind: 'table',
        structure: 'MXAPIASSET',
        match: [
          ['siteid', 'siteid'],
          ['location', 'location'],
        ],
      },
    },
    locationAttribute(),
    {
      name: 'reportedpriority',
      type: 'INTEGER',
      title: 'Reported Priority',
      lookup: { kind: 'domain', domainId: 'WOPRIORITY' },
    },
    { name: 'targetstart', type: 'DATETIME', title: 'Target Start' },
    { name: 'targetfinish', type: 'DATETIME', title: 'Target Finish' },
    ...changeTracking,
  ],
  statusHistory: 'TKSTATUS',
  relations: [
    { name: 'asset', object: 'ASSET', on: sameSite('assetnum', 'assetnum'), many: false },
    { name: 'location', object: 'LOCATIONS', on: sameSite('location', 'location'), many: false },
    siteRelation,
    { name: 'reportedbyperson', object: 'PERSON', on: [['reportedby', 'personid']], many: false },
    { name: 'affectedpersonrec', object: 'PERSON', on: [['affectedperson', 'personid']], many: false },
  ],
};
