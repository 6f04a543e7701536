import { Type, type Static } from 'typebox';

/**
 * The system service's query string. `action` is not required by the schema: its absence is answered with the
 * service's own error (EAS0066E) instead of a generic validation message.
 */
export const SystemServiceQuery = Type.Object(
  {
    action: Type.Optional(Type.String()),
    propName: Type.Optional(Type.String()),
    propNames: Type.Optional(Type.String()),
  },
  { additionalProperties: Type.String() },
);

export type SystemServiceQuery = Static<typeof SystemServiceQuery>;

/**
 * The setProperty body (docs/properties.md, "setProperty"). Values are strings in the contract; numbers and
 * booleans are accepted as clients send them and read as their string form (`true` = `1`). `serverName` defaults
 * to COMMON, and a missing `propValue` is a null value.
 */
export const SetPropertyBody = Type.Object({
  propName: Type.String({ minLength: 1, maxLength: 100 }),
  serverName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  propValue: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
});

export type SetPropertyBody = Static<typeof SetPropertyBody>;
