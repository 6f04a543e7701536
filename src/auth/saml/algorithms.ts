// Which algorithms the provider's signatures use (docs/federated-login.md, "Algorithms"). The library verifies
// whatever algorithm a signature names, SHA-1 included; the service reads the names first and refuses SHA-1 unless
// EAS_SAML_ALLOW_SHA1 is set. Only the names are read here: the signature itself is the library's to verify.

const XMLDSIG = 'http://www.w3.org/2000/09/xmldsig#';
/** RSA-SHA1, DSA-SHA1, HMAC-SHA1, ECDSA-SHA1 signature methods and the SHA-1 digest all end so. */
const SHA1 = /sha1$/i;

/** Whether an algorithm identifier (an XML signature's URI, or a redirect's SigAlg) names SHA-1. */
export function isSha1(algorithm: string): boolean {
  return SHA1.test(algorithm.trim());
}

/**
 * The SHA-1 signature and digest methods of the XML signatures in `root`, each once: those of a signature's
 * SignedInfo only. An encrypted key's OAEP digest (`xenc:EncryptionMethod/ds:DigestMethod`, often SHA-1) is a
 * parameter of the encryption, which no one can forge anything with.
 */
export function sha1Algorithms(root: Element): string[] {
  const found = new Set<string>();
  const signedInfos = root.getElementsByTagNameNS(XMLDSIG, 'SignedInfo');
  for (let index = 0; index < signedInfos.length; index += 1) {
    const signedInfo = signedInfos.item(index)!;
    for (const name of ['SignatureMethod', 'DigestMethod']) {
      const elements = signedInfo.getElementsByTagNameNS(XMLDSIG, name);
      for (let at = 0; at < elements.length; at += 1) {
        const algorithm = elements.item(at)?.getAttribute('Algorithm') ?? '';
        if (isSha1(algorithm)) found.add(algorithm);
      }
    }
  }
  return [...found];
}

/** The same, of an XML text (empty when it is not XML: the library refuses such a message itself). */
export async function sha1AlgorithmsOf(xml: string): Promise<string[]> {
  if (xml === '') return [];
  const { DOMParser } = await import('@xmldom/xmldom');
  try {
    const root = new DOMParser({ errorHandler: () => undefined }).parseFromString(
      xml,
      'text/xml',
    ).documentElement;
    return root ? sha1Algorithms(root) : [];
  } catch {
    return [];
  }
}
