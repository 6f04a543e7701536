import type { ObjectDef } from '../types.js';
import { keyAttribute, statusHistory } from './fragments.js';

const history = statusHistory('TKSTATUS', 'tkstatus', keyAttribute('ticketid', 'Service Request', 15), 20);

/** Status changes of service requests; a request without a site has a history without one. */
export const tkstatus: ObjectDef = {
  ...history,
  attributes: history.attributes.map((attribute) =>
    attribute.name === 'siteid' ? { ...attribute, required: false } : attribute,
  ),
};
