import { Type } from 'typebox';

/** `GET <context root>/saml/login`: where to go after sign-in (a path on this server). */
export const LoginQuery = Type.Object({
  returnTo: Type.Optional(Type.String({ maxLength: 2048 })),
});

/** The HTTP-POST binding's form fields at the assertion consumer service. */
export const AcsBody = Type.Object({
  SAMLResponse: Type.String({ minLength: 1 }),
  RelayState: Type.Optional(Type.String({ maxLength: 2048 })),
});
