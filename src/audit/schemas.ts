import { Type, type Static } from 'typebox';

/** Query strings of the audit routes: the usual `lean` and friends, none required. */
export const AuditQuery = Type.Object({}, { additionalProperties: Type.String() });

export type AuditQuery = Static<typeof AuditQuery>;
