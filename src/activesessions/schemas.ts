import { Type, type Static } from 'typebox';

/** `DELETE <root>/sessions/:sessionid`: the `sessionid` of the listing. */
export const SessionParams = Type.Object({ sessionid: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
export type SessionParams = Static<typeof SessionParams>;
