import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** Membership of this group is what makes a user an administrator; it needs no osauth rows. */
export const ADMIN_GROUP = 'MAXADMIN';

const ADMIN_USER = 'MAXADMIN';

/** Whether the administrator exists: a restart then skips hashing a password it would not store. */
export async function administratorExists(db: Kysely<Database>): Promise<boolean> {
  const row = await db
    .selectFrom('maxuser')
    .select('userid')
    .where('userid', '=', ADMIN_USER)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Creates the administrator (person, user, group and membership) on first start. Returns true when this call
 * created the user, false when it already existed. Safe to run from several processes at once: every insert
 * yields to a row committed meanwhile, and only the process whose user insert lands reports creation.
 */
export async function ensureAdministrator(db: Kysely<Database>, passwordHash: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('maxuser')
      .select('userid')
      .where('userid', '=', ADMIN_USER)
      .executeTakeFirst();
    if (existing) return false;

    const now = new Date();
    await trx
      .insertInto('person')
      .values({
        personid: ADMIN_USER,
        displayname: 'Maximo Administrator',
        status: 'ACTIVE',
        changedate: now,
        changeby: ADMIN_USER,
      })
      .onConflict((conflict) => conflict.column('personid').doNothing())
      .execute();
    const created = await trx
      .insertInto('maxuser')
      .values({
        userid: ADMIN_USER,
        loginid: ADMIN_USER,
        personid: ADMIN_USER,
        status: 'ACTIVE',
        password: passwordHash,
        sysuser: true,
        changedate: now,
        changeby: ADMIN_USER,
      })
      // No conflict target: a concurrent bootstrap may have taken the userid or the loginid.
      .onConflict((conflict) => conflict.doNothing())
      .returning('userid')
      .executeTakeFirst();
    if (!created) {
      const raced = await trx
        .selectFrom('maxuser')
        .select('userid')
        .where('userid', '=', ADMIN_USER)
        .executeTakeFirst();
      if (raced) return false;
      // The insert was skipped for another user's row (loginid or person MAXADMIN): there is no administrator.
      throw new Error(`Cannot create user ${ADMIN_USER}: its login id or person belongs to another user`);
    }

    await trx
      .insertInto('maxgroup')
      .values({
        groupname: ADMIN_GROUP,
        description: 'Administrators',
        adminmodelogin: true,
        authallsites: true,
        changedate: now,
        changeby: ADMIN_USER,
      })
      .onConflict((conflict) => conflict.column('groupname').doNothing())
      .execute();
    await trx
      .insertInto('groupuser')
      .values({ groupname: ADMIN_GROUP, userid: ADMIN_USER })
      .onConflict((conflict) => conflict.columns(['groupname', 'userid']).doNothing())
      .execute();
    return true;
  });
}
