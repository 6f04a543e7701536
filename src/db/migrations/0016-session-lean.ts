import type { Migration } from './migration.js';

/**
 * The JSON form a login chose (`lean=1` or `lean=0` on the login request) is its session's default: later requests
 * of the session without `lean` are answered in it (docs/compatibility.md, "Sessions"). Null: the API root's default.
 */
export const sessionLean: Migration = {
  name: '0016-session-lean',
  phase: 'expand',
  statements: [`alter table maxsession add column if not exists lean boolean`],
};
