import type { Kysely } from 'kysely';
import type { FederatedConfig } from '../../config.js';
import type { ChangeBus } from '../../db/change-bus.js';
import type { Database } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { findUserByName, groupExists, insertFederatedUser } from './repository.js';

/** The schemes through which an identity provider signs users in. */
export type FederatedScheme = 'OIDC' | 'SAML';

/** Who the identity provider says signed in, in the terms the scheme's settings map to a user. */
export interface FederatedIdentity {
  scheme: FederatedScheme;
  /** The value of the configured user-id claim or attribute (or the NameID). */
  name: string;
  displayName?: string | undefined;
  email?: string | undefined;
}

/** User ids this service creates: the length and characters a MAXUSER key takes. */
const CREATABLE_USERID = /^[A-Z0-9][A-Z0-9._@-]{0,29}$/;

export interface FederatedUsersOptions {
  db: Kysely<Database>;
  bus: ChangeBus;
  settings: Pick<FederatedConfig, 'createUsers' | 'defaultGroup'>;
  logWarning: (message: string, details: Record<string, unknown>) => void;
}

/**
 * Maps an identity the provider vouched for to a user of this service (docs/federated-login.md, "Users"): a user
 * whose user id or login id is the name, if it is ACTIVE; otherwise refused, unless the deployment lets such users
 * be created in its default group. Password blocks do not apply: they guard password logins only.
 */
export class FederatedUsers {
  constructor(private readonly options: FederatedUsersOptions) {}

  async userFor(identity: FederatedIdentity): Promise<string> {
    const name = identity.name.trim();
    if (name === '') throw errors.federatedSignInRefused('the identity provider named no user');
    const existing = await findUserByName(this.options.db, name);
    if (existing) {
      if (existing.status !== 'ACTIVE') throw errors.federatedUserRefused(existing.userid);
      return existing.userid;
    }
    const userid = name.toUpperCase();
    const { createUsers, defaultGroup } = this.options.settings;
    if (!createUsers || defaultGroup === undefined || !CREATABLE_USERID.test(userid)) {
      throw errors.federatedUserRefused(userid);
    }
    return this.create(identity, userid, defaultGroup);
  }

  private async create(identity: FederatedIdentity, userid: string, groupname: string): Promise<string> {
    const { db, bus } = this.options;
    const created = await db.transaction().execute(async (transaction) => {
      if (!(await groupExists(transaction, groupname))) {
        this.options.logWarning('federated user not created: the default group does not exist', {
          userid,
          group: groupname,
        });
        throw errors.federatedUserRefused(userid);
      }
      const inserted = await insertFederatedUser(transaction, {
        userid,
        displayname: identity.displayName?.slice(0, 62) ?? null,
        email: identity.email?.slice(0, 100) ?? null,
        groupname,
        changeby: identity.scheme,
      });
      // Profiles are cached in every process, a missing user as missing: the new user must be seen everywhere.
      if (inserted) await bus.notify<Database>(transaction, 'object', 'MAXUSER');
      return inserted;
    });
    if (created) {
      bus.deliverLocally('object', 'MAXUSER');
      return userid;
    }
    // Created meanwhile by another process (or the name belongs to another user's login id): decide on what is there.
    const raced = await findUserByName(db, userid);
    if (raced?.status !== 'ACTIVE') throw errors.federatedUserRefused(userid);
    return raced.userid;
  }
}
