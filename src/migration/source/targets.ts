import type { StoredValue } from '../../oslc/values.js';
import type { ReadTransform, WriteRules } from '../../oslc/write-extensions.js';
import { splitUrlCredentials, type CredentialSeal } from '../credentials.js';

/**
 * Write rules of targets: credentials in a DATABASE target's URL are moved into `username` and `password`, and
 * the password is sealed before it is stored (docs/security.md, "URL credentials").
 */
export function targetRules(seal: Pick<CredentialSeal, 'seal'>): WriteRules {
  const sealTargetCredentials = (values: Record<string, StoredValue>): void => {
    if (typeof values.url === 'string') {
      const split = splitUrlCredentials(values.url);
      values.url = split.url;
      // A user name or password given on its own wins over the one the URL carried.
      if (split.username !== undefined && !values.username) values.username = split.username;
      if (split.password !== undefined && !values.password) values.password = split.password;
    }
    if (typeof values.password === 'string' && values.password !== '')
      values.password = seal.seal(values.password);
  };
  return {
    beforeInsert: async ({ values }) => sealTargetCredentials(values),
    beforeUpdate: async ({ values }) => sealTargetCredentials(values),
  };
}

/** A target's URL as read: one stored with credentials by an earlier release is shown without them. */
export const targetUrlShown: ReadTransform = (stored) =>
  typeof stored === 'string' ? splitUrlCredentials(stored).url : stored;
