import type { ObjectDef } from '../types.js';
import { changeTracking, description, keyAttribute, uniqueId } from './fragments.js';

export const maxgroup: ObjectDef = {
  name: 'MAXGROUP',
  table: 'maxgroup',
  uniqueId: 'maxgroupid',
  keys: ['groupname'],
  attributes: [
    uniqueId('maxgroupid', 'Group ID'),
    keyAttribute('groupname', 'Group', 30),
    description,
    { name: 'adminmodelogin', type: 'YORN', title: 'Can Log In During Admin Mode', defaultValue: false },
    { name: 'authallsites', type: 'YORN', title: 'Authorize Group for All Sites', defaultValue: false },
    ...changeTracking,
  ],
};
