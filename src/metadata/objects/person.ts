import type { ObjectDef } from '../types.js';
import { changeTracking, keyAttribute, status, uniqueId } from './fragments.js';

export const person: ObjectDef = {
  name: 'PERSON',
  table: 'person',
  uniqueId: 'personuid',
  keys: ['personid'],
  attributes: [
    uniqueId('personuid', 'Person ID'),
    keyAttribute('personid', 'Person', 30),
    { name: 'displayname', type: 'ALN', title: 'Display Name', length: 62 },
    { name: 'firstname', type: 'ALN', title: 'First Name', length: 30 },
    { name: 'lastname', type: 'ALN', title: 'Last Name', length: 30 },
    { name: 'title', type: 'ALN', title: 'Title', length: 62 },
    { name: 'department', type: 'ALN', title: 'Department', length: 30 },
    { name: 'primaryemail', type: 'ALN', title: 'Primary E-mail', length: 100 },
    { name: 'primaryphone', type: 'ALN', title: 'Primary Phone', length: 40 },
    status('PERSONSTATUS', 'ACTIVE'),
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
