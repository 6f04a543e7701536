import type * as ldapts from 'ldapts';
import type { LdapConfig } from '../config.js';

type Ldapts = typeof ldapts;
type Client = ldapts.Client;

/** Characters escaped anywhere in a DN attribute value (RFC 4514 §2.4). */
const DN_SPECIAL = /[\\,+"<>;=\0]/g;

/** A login name as one attribute value of a DN, so that it cannot add RDNs or change the DN's shape. */
export function escapeDnValue(value: string): string {
  let escaped = value.replace(DN_SPECIAL, (character) => (character === '\0' ? '\\00' : `\\${character}`));
  if (escaped.startsWith(' ') || escaped.startsWith('#')) escaped = `\\${escaped}`;
  if (escaped.endsWith(' ') && !escaped.endsWith('\\ ')) escaped = `${escaped.slice(0, -1)}\\ `;
  return escaped;
}

/** Directory answers that mean "these credentials are not valid", as opposed to "the directory failed". */
function isRefusal(
  { InvalidCredentialsError, NoSuchObjectError, InvalidDNSyntaxError, UnwillingToPerformError }: Ldapts,
  error: unknown,
): boolean {
  return (
    error instanceof InvalidCredentialsError ||
    error instanceof NoSuchObjectError ||
    error instanceof InvalidDNSyntaxError ||
    error instanceof UnwillingToPerformError
  );
}

function firstValue(value: unknown): string | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (typeof first === 'string') return first;
  if (Buffer.isBuffer(first)) return first.toString('utf8');
  return undefined;
}

/**
 * Verifies a login against an LDAP directory (the `appserver` security mode): the user's DN comes from the template,
 * or from a search; the password is checked by binding as that DN; the user id is the entry's uid attribute.
 */
export class LdapDirectory {
  constructor(
    private readonly config: LdapConfig,
    private readonly timeoutMs = 5000,
  ) {}

  /**
   * The uid of the entry the login names when the password binds as it; undefined when the directory refuses.
   * Throws when the directory cannot be asked (unreachable, misconfigured), which is not the caller's fault.
   */
  async authenticate(login: string, password: string): Promise<string | undefined> {
    // An empty password is an unauthenticated bind, which directories accept: never a login.
    if (login === '' || password === '') return undefined;
    // Loaded at the first directory login, not at start-up: only the appserver mode uses it (docs/startup.md).
    const ldap = await import('ldapts');
    const client = new ldap.Client({
      url: this.config.url,
      timeout: this.timeoutMs,
      connectTimeout: this.timeoutMs,
    });
    try {
      const dn = await this.userDn(ldap, client, login);
      if (dn === undefined) return undefined;
      try {
        await client.bind(dn, password);
      } catch (error) {
        if (isRefusal(ldap, error)) return undefined;
        throw error;
      }
      return (await this.readUid(ldap, client, dn)) ?? login;
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  private async userDn(ldap: Ldapts, client: Client, login: string): Promise<string | undefined> {
    const { userDnTemplate, searchBase, searchFilter, bindDn, bindPassword } = this.config;
    if (userDnTemplate) return userDnTemplate.replaceAll('{0}', escapeDnValue(login));
    if (bindDn) await client.bind(bindDn, bindPassword ?? '');
    try {
      const { searchEntries } = await client.search(searchBase ?? '', {
        scope: 'sub',
        filter: searchFilter.replaceAll('{0}', ldap.Filter.escape(login)),
        attributes: ['dn'],
        sizeLimit: 2,
      });
      // Two entries for one login name is ambiguous: refused rather than guessed.
      return searchEntries.length === 1 ? searchEntries[0]!.dn : undefined;
    } catch (error) {
      if (error instanceof ldap.SizeLimitExceededError) return undefined;
      throw error;
    }
  }

  private async readUid(ldap: Ldapts, client: Client, dn: string): Promise<string | undefined> {
    const attribute = this.config.uidAttribute;
    try {
      const { searchEntries } = await client.search(dn, { scope: 'base', attributes: [attribute] });
      const entry = searchEntries[0];
      return entry ? firstValue(entry[attribute]) : undefined;
    } catch (error) {
      if (isRefusal(ldap, error)) return undefined;
      throw error;
    }
  }
}
