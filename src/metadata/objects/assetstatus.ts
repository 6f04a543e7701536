import type { ObjectDef } from '../types.js';
import { keyAttribute, statusHistory } from './fragments.js';

/** Status changes of assets. */
export const assetstatus: ObjectDef = statusHistory(
  'ASSETSTATUS',
  'assetstatus',
  keyAttribute('assetnum', 'Asset', 25),
  20,
);
