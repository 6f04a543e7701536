import { Type } from 'typebox';

/** `returnTo`: the page to land on after signing in; only same-origin targets are followed. */
export const LoginQuery = Type.Object(
  { returnTo: Type.Optional(Type.String({ maxLength: 2048 })) },
  { additionalProperties: true },
);

/** The provider's answer: a code and the state, or an error; other parameters (`iss`, `session_state`) pass. */
export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 1024 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: true },
);

/** The provider's back-channel logout: a form with the signed logout token. */
export const BackChannelLogoutBody = Type.Object({
  logout_token: Type.String({ minLength: 1, maxLength: 8192 }),
});
