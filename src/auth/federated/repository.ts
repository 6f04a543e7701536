import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface FederatedUserRow {
  userid: string;
  status: string;
}

/** The user an identity-provider name designates: by user id or login id, in any case. */
export async function findUserByName(
  db: Kysely<Database>,
  name: string,
): Promise<FederatedUserRow | undefined> {
  const upper = name.toUpperCase();
  return db
    .selectFrom('maxuser')
    .select(['userid', 'status'])
    .where((eb) => eb.or([eb('userid', '=', upper), eb('loginid', '=', upper)]))
    .orderBy('userid')
    .limit(1)
    .executeTakeFirst();
}

export async function groupExists(db: Kysely<Database>, groupname: string): Promise<boolean> {
  const row = await db
    .selectFrom('maxgroup')
    .select('groupname')
    .where('groupname', '=', groupname)
    .executeTakeFirst();
  return row !== undefined;
}

export interface NewFederatedUser {
  userid: string;
  displayname: string | null;
  email: string | null;
  groupname: string;
  /** Who the change is recorded as made by (the scheme's name). */
  changeby: string;
}

/**
 * Inserts the person, the user (without a password: it signs in through the identity provider only) and its group
 * membership. Returns false when another process created the same user meanwhile: nothing is inserted twice.
 */
export async function insertFederatedUser(db: Kysely<Database>, user: NewFederatedUser): Promise<boolean> {
  const now = new Date();
  await db
    .insertInto('person')
    .values({
      personid: user.userid,
      displayname: user.displayname,
      primaryemail: user.email,
      status: 'ACTIVE',
      changedate: now,
      changeby: user.changeby,
    })
    .onConflict((conflict) => conflict.column('personid').doNothing())
    .execute();
  const created = await db
    .insertInto('maxuser')
    .values({
      userid: user.userid,
      loginid: user.userid,
      personid: user.userid,
      status: 'ACTIVE',
      password: null,
      sysuser: false,
      changedate: now,
      changeby: user.changeby,
    })
    .onConflict((conflict) => conflict.doNothing())
    .returning('userid')
    .executeTakeFirst();
  if (!created) return false;
  await db
    .insertInto('groupuser')
    .values({ groupname: user.groupname, userid: user.userid })
    .onConflict((conflict) => conflict.columns(['groupname', 'userid']).doNothing())
    .execute();
  return true;
}
