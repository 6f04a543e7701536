import { Type, type Static } from 'typebox';

/**
 * The body of `POST <root>/adminmode/on` (docs/adminmode.md). Both fields are optional (defaults from the properties
 * `mxe.adminmode.numsessions` and `mxe.adminmode.logoutmin`); `logoutmin` may be fractional. Numbers sent as strings
 * are read as numbers (the validator's coercion), as clients that build bodies from form fields send them.
 */
export const TurnOnBody = Type.Object({
  numsessions: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  logoutmin: Type.Optional(Type.Number({ minimum: 0, maximum: 525_600 })),
});

export type TurnOnBody = Static<typeof TurnOnBody>;

/** `POST <root>/adminmode/off` reads no field; any JSON object (or no body) is accepted. */
export const TurnOffBody = Type.Object({});

export type TurnOffBody = Static<typeof TurnOffBody>;

/** `GET <root>/adminmode/history`: how many of the latest changes. */
export const HistoryQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});

export type HistoryQuery = Static<typeof HistoryQuery>;
