import type { ObjectDef } from '../types.js';
import { changeTracking, keyAttribute, status, uniqueId } from './fragments.js';

export const maxuser: ObjectDef = {
  name: 'MAXUSER',
  table: 'maxuser',
  uniqueId: 'maxuserid',
  keys: ['userid'],
  attributes: [
    uniqueId('maxuserid', 'User ID'),
    keyAttribute('userid', 'User', 30),
    { name: 'loginid', type: 'UPPER', title: 'Login ID', length: 50 },
    {
      name: 'personid',
      type: 'UPPER',
      title: 'Person',
      length: 30,
      required: true,
      references: { object: 'PERSON', on: [['personid', 'personid']] },
    },
    status('MAXUSERSTATUS', 'ACTIVE'),
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
