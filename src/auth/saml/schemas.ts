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

/** A logout message of the HTTP-Redirect binding (single logout endpoint). */
export const SloQuery = Type.Object({
  SAMLRequest: Type.Optional(Type.String({ minLength: 1 })),
  SAMLResponse: Type.Optional(Type.String({ minLength: 1 })),
  RelayState: Type.Optional(Type.String({ maxLength: 2048 })),
  SigAlg: Type.Optional(Type.String({ maxLength: 256 })),
  Signature: Type.Optional(Type.String({ maxLength: 4096 })),
});

/** A logout message of the HTTP-POST binding. */
export const SloBody = Type.Object({
  SAMLRequest: Type.Optional(Type.String({ minLength: 1 })),
  SAMLResponse: Type.Optional(Type.String({ minLength: 1 })),
  RelayState: Type.Optional(Type.String({ maxLength: 2048 })),
});
