import type { Migration } from './migration.js';

/**
 * The system properties of cross-origin requests (docs/operations.md, "Cross-origin requests"), named as the
 * deployed systems name theirs. None has a default: no origin is allowed until an administrator names one.
 * Global only: a browser application reaches whichever process the load balancer picks, so every process must
 * answer it alike. A property already registered is left as it is (the migration may run again over it).
 */
const CORS_PROPERTIES: ReadonlyArray<readonly [name: string, description: string]> = [
  [
    'mxe.oslc.aclalloworigin',
    'Comma-separated origins (https://app.example.com) whose browser applications may call the API; * allows any',
  ],
  [
    'mxe.oslc.aclallowmethods',
    'Comma-separated HTTP methods a preflight allows cross-origin (GET,POST,PUT,DELETE,OPTIONS)',
  ],
  [
    'mxe.oslc.aclallowheaders',
    'Comma-separated request headers a preflight allows cross-origin (accept,content-type,maxauth,apikey,...)',
  ],
  [
    'mxe.oslc.aclexposeheaders',
    'Comma-separated response headers cross-origin callers may read (etag,location,...)',
  ],
];

const literal = (value: string): string => `'${value.replace(/'/g, "''")}'`;

export const corsProperties: Migration = {
  name: '0019-cors-properties',
  phase: 'expand',
  statements: [
    `insert into maxprop (propname, description, maxtype, maximodefault, globalonly, liverefresh, onlinechanges,
       masked, nullsallowed, changeby, changedate) values
     ${CORS_PROPERTIES.map(
       ([name, description]) =>
         `(${literal(name)}, ${literal(description)}, 'ALN', null, true, true, true, false, true, 'MAXADMIN', now())`,
     ).join(',\n     ')}
     on conflict (propname) do nothing`,
  ],
};
