// The key of `private_key_jwt` client authentication (docs/federated-login.md, "Client authentication"): the client
// signs a short assertion for each token request instead of sending a secret. Its public half is published at
// `<context root>/oidc/jwks` for providers that read the client's keys from a URL.
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import type { JWK } from 'jose';

export interface ClientKey {
  /** The signing key for openid-client's PrivateKeyJwt. */
  key: CryptoKey;
  kid: string;
  alg: 'RS256' | 'ES256';
  /** The public key as published. */
  publicJwk: JWK;
}

/** The RFC 7638 thumbprint: a key id every process computes alike, which changes with the key. */
function thumbprint(jwk: JWK): string {
  const members =
    jwk.kty === 'RSA'
      ? { e: jwk.e, kty: jwk.kty, n: jwk.n }
      : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

/** Reads the PEM key (checked by the configuration already); RSA signs RS256, an EC P-256 key ES256. */
export async function clientKeyOf(pem: string): Promise<ClientKey> {
  const { importPKCS8 } = await import('jose');
  const privateKey = createPrivateKey(pem);
  const alg = privateKey.asymmetricKeyType === 'ec' ? 'ES256' : 'RS256';
  const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = thumbprint(publicJwk);
  return {
    key: await importPKCS8(pkcs8, alg),
    kid,
    alg,
    publicJwk: { ...publicJwk, kid, alg, use: 'sig' },
  };
}
