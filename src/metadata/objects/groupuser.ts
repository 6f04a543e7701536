import type { ObjectDef } from '../types.js';
import { keyAttribute, uniqueId } from './fragments.js';

export const groupuser: ObjectDef = {
  name: 'GROUPUSER',
  table: 'groupuser',
  uniqueId: 'groupuserid',
  keys: ['groupname', 'userid'],
  attributes: [
    uniqueId('groupuserid', 'Group User ID'),
    keyAttribute('groupname', 'Group', 30, {
      references: { object: 'MAXGROUP', on: [['groupname', 'groupname']] },
    }),
    keyAttribute('userid', 'User', 30, {
      references: { object: 'MAXUSER', on: [['userid', 'userid']] },
      // People who have a user account; pick `maxuser.userid` (docs/lookups.md).
      lookup: { kind: 'table', structure: 'MXAPIPERUSER', where: 'maxuser.userid="*"' },
    }),
  ],
  relations: [{ name: 'maxuser', object: 'MAXUSER', on: [['userid', 'userid']], many: false }],
};
