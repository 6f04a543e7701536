// This service provider's metadata (docs/federated-login.md, "Metadata"): what an identity provider needs to
// register it. Written here rather than by the library, whose document carries one logout binding, one NameID format
// and no rollover of the encryption certificate; the shape follows the SAML 2.0 metadata schema (the tests validate
// it against the schema).
import type { SamlConfig } from '../../config.js';

const BINDINGS = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
};

/** The NameID formats whose value can name a user (a transient one only when an attribute carries the user id). */
export const NAMEID_FORMATS = [
  'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
];
const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

/** The content encryption the library decrypts, strongest first. */
const ENCRYPTION_METHODS = [
  'http://www.w3.org/2009/xmlenc11#aes256-gcm',
  'http://www.w3.org/2009/xmlenc11#aes128-gcm',
  'http://www.w3.org/2001/04/xmlenc#aes256-cbc',
  'http://www.w3.org/2001/04/xmlenc#aes128-cbc',
];

function escapeXml(text: string): string {
  return text.replace(/[&<>"]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The base64 body of a PEM certificate. */
function certificateBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

function keyDescriptor(use: 'signing' | 'encryption', pem: string): string {
  const methods =
    use === 'encryption'
      ? ENCRYPTION_METHODS.map((algorithm) => `<md:EncryptionMethod Algorithm="${algorithm}"/>`).join('')
      : '';
  return (
    `<md:KeyDescriptor use="${use}"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificateBody(pem)}` +
    `</ds:X509Certificate></ds:X509Data></ds:KeyInfo>${methods}</md:KeyDescriptor>`
  );
}

/**
 * The metadata document. Every certificate is published for signing and for encryption: while the provider switches
 * to a new key pair (listed second in EAS_SAML_SP_CERT), it may still check or encrypt with the old one.
 */
export function serviceProviderMetadata(config: SamlConfig): string {
  const certificates = config.spKeys?.certificates ?? [];
  const keys = [
    ...certificates.map((pem) => keyDescriptor('signing', pem)),
    ...certificates.map((pem) => keyDescriptor('encryption', pem)),
  ].join('');
  const logout = [BINDINGS.redirect, BINDINGS.post]
    .map((binding) => `<md:SingleLogoutService Binding="${binding}" Location="${escapeXml(config.sloUrl)}"/>`)
    .join('');
  const formats = [...NAMEID_FORMATS, ...(config.userAttribute === undefined ? [] : [TRANSIENT])]
    .map((format) => `<md:NameIDFormat>${format}</md:NameIDFormat>`)
    .join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" ' +
    `xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${escapeXml(config.spEntityId)}">` +
    '<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" ' +
    `AuthnRequestsSigned="${config.spKeys !== undefined}" WantAssertionsSigned="true">` +
    keys +
    logout +
    formats +
    `<md:AssertionConsumerService Binding="${BINDINGS.post}" Location="${escapeXml(config.acsUrl)}" index="0" isDefault="true"/>` +
    '</md:SPSSODescriptor></md:EntityDescriptor>'
  );
}
