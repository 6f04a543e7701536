/**
 * Return addresses that must never lead a browser off this service after signing in (docs/federated-login.md,
 * "Return address"): spellings that normalise to a protocol-relative `//host`, encoded slashes, dots and backslashes,
 * control characters, credentials, other schemes and absolute URLs. Shared by the check's unit tests and the
 * sign-in flows' end-to-end ones.
 */
export const HOSTILE_RETURN_ADDRESSES: readonly string[] = [
  '/.//evil.com',
  '/..//evil.com',
  '/%2e%2e//evil.com/path?x=1',
  '/%2E//evil.com',
  '/maximo/..//evil.com',
  '/maximo/../..//evil.com',
  '/a/%2e%2e/%2e%2e//evil.com',
  '/%2fevil.com',
  '/%2F%2Fevil.com',
  '/%5cevil.com',
  '/%5C%5Cevil.com',
  '%2f%2fevil.com',
  '/\\evil.com',
  '\\/evil.com',
  '/\t/evil.com',
  '/\n/evil.com',
  '\t//evil.com',
  '//evil.com@eas.example.org',
  'https://evil.com@eas.example.org/maximo',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'data:text/html,x',
  'https:/evil.com',
  'https:\\\\evil.com',
  'https://evil.com/maximo',
  '//evil.com',
  '///evil.com',
  '////evil.com',
];

/** The spellings the security review found to work end to end before the check applied to the sent address. */
export const REVIEWED_RETURN_ADDRESSES: readonly string[] = [
  '/.//evil.com',
  '/..//evil.com',
  '/%2e%2e//evil.com/path?x=1',
];
