import type { ObjectDef } from '../types.js';
import { keyAttribute, statusHistory } from './fragments.js';

/** Status changes of work orders. */
export const wostatus: ObjectDef = statusHistory(
  'WOSTATUS',
  'wostatus',
  keyAttribute('wonum', 'Work Order', 25),
  16,
);
