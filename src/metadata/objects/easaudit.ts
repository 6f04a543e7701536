import type { AttributeDef, ObjectDef } from '../types.js';
import { uniqueId } from './fragments.js';

/** An attribute written only by the service: no client sets it (writes to these objects are refused, src/audit). */
const recorded = (
  name: string,
  type: AttributeDef['type'],
  title: string,
  length?: number,
): AttributeDef => ({ name, type, title, ...(length !== undefined && { length }), generated: true });

/**
 * The audit trail (src/audit, docs/audit.md), read by administrators through MXAPIAUDIT. Records are written by the
 * service in the transaction of each change, never through the object structure.
 */
export const easaudit: ObjectDef = {
  name: 'EASAUDIT',
  table: 'easaudit',
  uniqueId: 'auditid',
  keys: ['auditid'],
  attributes: [
    uniqueId('auditid', 'Audit Record'),
    recorded('eventtime', 'DATETIME', 'Time'),
    recorded('eventtype', 'ALN', 'Event', 40),
    recorded('outcome', 'UPPER', 'Outcome', 12),
    recorded('userid', 'ALN', 'Acting User', 100),
    recorded('authscheme', 'ALN', 'Authenticated By', 16),
    recorded('keyid', 'ALN', 'API Key Fingerprint', 16),
    recorded('sessiondigest', 'ALN', 'Session Digest', 16),
    recorded('clientaddr', 'ALN', 'Client Address', 64),
    recorded('requestid', 'ALN', 'Request ID', 100),
    recorded('servername', 'ALN', 'Server Name', 100),
    recorded('objectname', 'ALN', 'Object', 40),
    recorded('objectkey', 'ALN', 'Object Key', 254),
    recorded('beforevalue', 'ALN', 'Before'),
    recorded('aftervalue', 'ALN', 'After'),
    recorded('detail', 'ALN', 'Detail'),
    recorded('mac', 'ALN', 'Record MAC', 64),
    recorded('chainseq', 'BIGINT', 'Chain Position'),
    recorded('digest', 'ALN', 'Chain Digest', 64),
  ],
};

/** Login attempts and logouts (src/auth/login.ts), read by administrators through MXAPILOGINTRACKING. */
export const logintracking: ObjectDef = {
  name: 'LOGINTRACKING',
  table: 'logintracking',
  uniqueId: 'logintrackingid',
  keys: ['logintrackingid'],
  attributes: [
    uniqueId('logintrackingid', 'Login Tracking ID'),
    recorded('loginid', 'ALN', 'Login Name', 100),
    recorded('userid', 'UPPER', 'User', 30),
    recorded('clientaddr', 'ALN', 'Client Address', 64),
    recorded('scheme', 'ALN', 'Scheme', 16),
    recorded('attemptresult', 'UPPER', 'Result', 16),
    recorded('attempts', 'INTEGER', 'Attempts'),
    recorded('attemptdate', 'DATETIME', 'Attempt Date'),
  ],
};

/** The objects of the audit structures: read-only to everyone (src/audit/routes.ts refuses their writes). */
export const AUDIT_OBJECTS: readonly string[] = ['EASAUDIT', 'LOGINTRACKING'];
