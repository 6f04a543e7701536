import type { ObjectDef } from '../types.js';
import { description, keyAttribute, siteRelation, uniqueId } from './fragments.js';

/**
 * Work logs of work orders and service requests (docs/compatibility.md, "Work logs"): the record's key, class and
 * site come from the parent through the child collection's join; `createby`/`createdate` and
 * `modifyby`/`modifydate` are set by the service (src/worklog/write-rules.ts).
 */
export const worklog: ObjectDef = {
  name: 'WORKLOG',
  table: 'worklog',
  uniqueId: 'worklogid',
  keys: ['worklogid'],
  siteAttribute: 'siteid',
  orgAttribute: 'orgid',
  attributes: [
    uniqueId('worklogid', 'Work Log ID'),
    keyAttribute('recordkey', 'Record', 25),
    keyAttribute('class', 'Class', 16),
    {
      name: 'siteid',
      type: 'UPPER',
      title: 'Site',
      length: 8,
      insertOnly: true,
      references: { object: 'SITE', on: [['siteid', 'siteid']] },
    },
    { name: 'orgid', type: 'UPPER', title: 'Organization', length: 8, insertOnly: true },
    description,
    { name: 'description_longdescription', type: 'ALN', title: 'Details', length: 32000 },
    {
      name: 'logtype',
      type: 'UPPER',
      title: 'Type',
      length: 16,
      domainId: 'LOGTYPE',
      defaultValue: 'CLIENTNOTE',
    },
    { name: 'clientviewable', type: 'YORN', title: 'Viewable', defaultValue: false },
    { name: 'createby', type: 'UPPER', title: 'Created By', length: 30, generated: true },
    { name: 'createdate', type: 'DATETIME', title: 'Date', generated: true },
    { name: 'modifyby', type: 'UPPER', title: 'Modified By', length: 30, generated: true },
    { name: 'modifydate', type: 'DATETIME', title: 'Modified Date', generated: true },
  ],
  relations: [siteRelation],
};
