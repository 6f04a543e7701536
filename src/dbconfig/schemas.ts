import { Type, type Static } from 'typebox';

/** Query strings of the database-configuration routes: the usual `lean` and friends, none of them required. */
export const DbConfigQuery = Type.Object({}, { additionalProperties: Type.String() });

/** "Apply configuration changes" takes no body; one sent (an empty JSON object, say) is read and ignored. */
export const ApplyBody = Type.Optional(Type.Unknown());

export type DbConfigQuery = Static<typeof DbConfigQuery>;
