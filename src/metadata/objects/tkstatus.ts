import type { ObjectDef } from '../types.js';
import { keyAttribute, statusHistory } from './fragments.js';

/** Status changes of service requests. */
export const tkstatus: ObjectDef = statusHistory(
  'TKSTATUS',
  'tkstatus',
  keyAttribute('ticketid', 'Service Request', 15),
  20,
);
