import { errors } from '../errors.js';
import type { WriteRules } from '../oslc/write-extensions.js';

/** The write rules of the audit structures' objects: records are written by the service only, never by a client. */
export const READ_ONLY: WriteRules = {
  beforeInsert: ({ object }) => Promise.reject(errors.actionNotAllowed('insert', object.name)),
  beforeUpdate: ({ object }) => Promise.reject(errors.actionNotAllowed('update', object.name)),
  beforeDelete: ({ object }) => Promise.reject(errors.actionNotAllowed('delete', object.name)),
};
