import type { ObjectDef } from '../types.js';
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

export const workorder: ObjectDef = {
  name: 'WORKORDER',
  table: 'workorder',
  uniqueId: 'workorderid',
  keys: ['wonum', 'siteid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    uniqueId('workorderid', 'Work Order ID'),
    keyAttribute('wonum', 'Work Order', 25, { autokey: 'WORKORDERNUM' }),
    ...siteAndOrg,
    description,
    status('WOSTATUS', 'WAPPR', {
      length: 16,
      required: true,
      lookup: { kind: 'domain', transitions: woStatusTransitions },
    }),
    statusDate,
    { name: 'worktype', type: 'UPPER', title: 'Work Type', length: 5, domainId: 'WORKTYPE' },
    {
      name: 'assetnum',
      type: 'UPPER',
      title: 'Asset',
      length: 25,
      references: { object: 'ASSET', on: sameSite('assetnum', 'assetnum') },
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
    locationAttribute(),
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
      references: { object: 'WORKORDER', on: sameSite('parent', 'wonum') },
    },
    { name: 'istask', type: 'YORN', title: 'Is Task', required: true, defaultValue: false },
    { name: 'taskid', type: 'INTEGER', title: 'Task' },
    { name: 'schedstart', type: 'DATETIME', title: 'Scheduled Start' },
    { name: 'schedfinish', type: 'DATETIME', title: 'Scheduled Finish' },
    { name: 'actstart', type: 'DATETIME', title: 'Actual Start' },
    { name: 'actfinish', type: 'DATETIME', title: 'Actual Finish' },
    { name: 'description_longdescription', type: 'ALN', title: 'Long Description', length: 32000 },
    // The record this one follows up (`wsmethod:createFollowUp`, docs/compatibility.md "Actions").
    { name: 'origrecordid', type: 'UPPER', title: 'Originating Record', length: 25, insertOnly: true },
    {
      name: 'origrecordclass',
      type: 'UPPER',
      title: 'Originating Record Class',
      length: 16,
      insertOnly: true,
    },
  ],
  statusHistory: 'WOSTATUS',
  relations: [
    { name: 'asset', object: 'ASSET', on: sameSite('assetnum', 'assetnum'), many: false },
    { name: 'location', object: 'LOCATIONS', on: sameSite('location', 'location'), many: false },
    siteRelation,
    { name: 'parentwo', object: 'WORKORDER', on: sameSite('parent', 'wonum'), many: false },
  ],
};
