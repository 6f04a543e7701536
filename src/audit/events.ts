import type { DefinitionRow } from '../properties/repository.js';
import { isSecure } from '../properties/values.js';
import type { RecordWrite } from '../oslc/write-extensions.js';
import type { AuditEvent } from './types.js';

export type { AuditRecorder } from './types.js';

/*
 * The events other domains record, described here so that each domain's own change is one call
 * (`audit.record(transaction, event)`) and the trail's vocabulary stays in one place (docs/audit.md, "Events").
 */

/** What a secure property's value is recorded as: that it changed, never what it is. */
export const SECURE_VALUE = '********';

/** Properties of cross-origin requests: recorded as CORS settings (docs/operations.md, "Cross-origin requests"). */
const CORS_PROPERTY = /^mxe\.oslc\.acl/i;

/** A system property set: the value before and after, unless the property is secure (masked or encrypted). */
export function propertyAuditEvent(
  definition: DefinitionRow,
  { serverName, oldValue: before }: { serverName: string; oldValue: string | null },
  after: string | null,
): AuditEvent {
  const secure = isSecure(definition);
  return {
    type: CORS_PROPERTY.test(definition.propname) ? 'cors.set' : 'property.set',
    object: 'MAXPROP',
    key: `${definition.propname}/${serverName}`,
    before: { value: secure ? (before === null ? null : SECURE_VALUE) : before },
    after: { value: secure ? (after === null ? null : SECURE_VALUE) : after },
    ...(secure && { detail: { secure: true, changed: before !== after } }),
  };
}

/** The event names of the objects written through object structures that the trail records, by object. */
const OBSERVED_OBJECTS: Readonly<Record<string, string>> = {
  APIKEYTOKEN: 'apikey.admin',
  MAXUSER: 'user',
  PERSON: 'person',
  MAXGROUP: 'group',
  GROUPUSER: 'membership',
  OSAUTH: 'rights',
  DMPACKAGEDEF: 'packagedef',
  DMPKGDEFCONTENT: 'packagedef.content',
  DMPKGDSTTRGT: 'packagetarget',
};

export const observedObjects = (): readonly string[] => Object.keys(OBSERVED_OBJECTS);

/** Columns never recorded from a written row, whatever their name says: hashes and sealed values. */
const HIDDEN_COLUMNS: ReadonlySet<string> = new Set([
  'password',
  'apikey',
  'apikeydigest',
  'encryptedvalue',
  'rowstamp',
]);

/** A record written through an object structure (users, groups, rights, keys for users, package definitions). */
export function recordWriteEvent(write: RecordWrite): AuditEvent | undefined {
  const prefix = OBSERVED_OBJECTS[write.object.name];
  if (prefix === undefined) return undefined;
  const keys = write.object.keys.map((name) => String((write.after ?? write.before)?.[name] ?? ''));
  return {
    type: `${prefix}.${write.operation}`,
    origin: write.origin,
    object: write.object.name,
    key: keys.join('/'),
    before: visible(write.before),
    after: visible(write.after),
  };
}

function visible(row: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
  if (!row) return undefined;
  const shown: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    if (!HIDDEN_COLUMNS.has(name.toLowerCase())) shown[name] = value;
  }
  return shown;
}

/** An admin mode transition (docs/adminmode.md); ended sessions are counted, never named. */
export function adminModeEvent(
  transition: 'on' | 'pending' | 'off',
  from: number,
  to: number,
  endedSessions: number,
): AuditEvent {
  return {
    type: `adminmode.${transition}`,
    object: 'ADMINMODE',
    before: { state: from },
    after: { state: to },
    detail: { endedSessions },
  };
}

/** The events of the login tracking's results (src/auth/login.ts). */
const LOGIN_EVENTS: Readonly<Record<string, { type: string; outcome: AuditEvent['outcome'] }>> = {
  SUCCESS: { type: 'login.success', outcome: 'SUCCESS' },
  FAILED: { type: 'login.failure', outcome: 'FAILURE' },
  BLOCKED: { type: 'login.blocked', outcome: 'REFUSED' },
  REFUSED: { type: 'login.refused', outcome: 'REFUSED' },
  LOGOUT: { type: 'logout', outcome: 'SUCCESS' },
};

/**
 * A login tracking row as an event: the name tried, its scheme and address (a batch of successes is written after
 * its requests, so the row says them, not the request). Successes of one client are one row per batch, with the
 * count: per-request credentials are not recorded per request.
 */
export function loginEvent(row: {
  loginid: string;
  userid?: string | null;
  clientaddr?: string | null;
  scheme: string;
  attemptresult: string;
  attempts?: number | undefined;
}): AuditEvent {
  const event = LOGIN_EVENTS[row.attemptresult] ?? { type: 'login.other', outcome: 'FAILURE' as const };
  return {
    type: event.type,
    outcome: event.outcome,
    user: row.userid ?? row.loginid,
    scheme: row.scheme,
    address: row.clientaddr ?? null,
    object: 'MAXUSER',
    key: row.loginid,
    ...(row.attempts !== undefined && row.attempts > 1 && { detail: { attempts: row.attempts } }),
  };
}

/** A user blocked after too many failed logins. */
export function lockoutEvent(login: string, address: string): AuditEvent {
  return {
    type: 'login.lockout',
    outcome: 'REFUSED',
    user: login.toUpperCase().slice(0, 100),
    address,
    object: 'MAXUSER',
    key: login.toUpperCase().slice(0, 100),
  };
}

/** Database configuration applied (docs/dbconfig.md): every change applied, as it was staged. */
export function dbconfigEvent(applied: readonly object[], structural: boolean): AuditEvent {
  return {
    type: 'dbconfig.apply',
    object: 'MAXATTRIBUTECFG',
    after: applied,
    detail: { structural, count: applied.length },
  };
}

/** A step of a migration package's journey (docs/migration.md): the package, and its record counts where it has them. */
export function packageEvent(
  action: string,
  row: { pkgdefname: string; dmpackageid: number; package: string },
  detail: Record<string, unknown> = {},
): AuditEvent {
  return {
    type: `package.${action}`,
    object: 'DMPACKAGE',
    key: `${row.pkgdefname}/${row.dmpackageid}`,
    detail: { package: row.package, ...detail },
  };
}

/**
 * Sessions ended by an administrator (the console, `sessions end`) or by admin mode: one record per ending, naming
 * each session by the first 16 hex digits of its id (never the cookie) and its user.
 */
export function sessionsEndedEvent(
  by: 'administrator' | 'adminmode',
  ended: ReadonlyArray<{ sessionhash: string; userid?: string | null }>,
  owner?: string,
): AuditEvent {
  return {
    type: 'session.end',
    object: 'MAXSESSION',
    ...(owner !== undefined && { key: owner }),
    detail: {
      by,
      ended: ended.length,
      sessions: ended.slice(0, 100).map((session) => ({
        session: session.sessionhash.slice(0, 16),
        ...(session.userid && { user: session.userid }),
      })),
    },
  };
}
