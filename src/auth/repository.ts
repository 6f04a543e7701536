import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ObjectStructureRights } from './types.js';

export interface UserCredentials {
  userid: string;
  status: string;
  password: string | null;
  /** End of a temporary block after failed logins; null or past: not blocked. */
  blockeduntil: Date | null;
}

/** Whether the user may log in with a password now: ACTIVE and not within a temporary block. */
export function mayLogIn(user: UserCredentials, now: number): boolean {
  return user.status === 'ACTIVE' && (user.blockeduntil === null || user.blockeduntil.getTime() <= now);
}

/** A user by user id or login id, in any case (clients send `wilson` for WILSON). */
export async function findCredentials(
  db: Kysely<Database>,
  login: string,
): Promise<UserCredentials | undefined> {
  const upper = login.toUpperCase();
  return db
    .selectFrom('maxuser')
    .select(['userid', 'status', 'password', 'blockeduntil'])
    .where((eb) => eb.or([eb('userid', '=', upper), eb('loginid', '=', upper)]))
    .limit(1)
    .executeTakeFirst();
}

export interface ProfileRows {
  user: {
    userid: string;
    personid: string;
    status: string;
    defsite: string | null;
    loginid: string | null;
    displayname: string | null;
    orgid: string | null;
    /** The stored password hash (the profile keeps only a digest of it). */
    password: string | null;
  };
  groups: string[];
  /** Whether one of the user's groups may log in during admin mode (`maxgroup.adminmodelogin`). */
  adminModeLogin: boolean;
  rights: Array<{ objectstructure: string } & ObjectStructureRights>;
}

export async function loadProfileRows(
  db: Kysely<Database>,
  userid: string,
): Promise<ProfileRows | undefined> {
  const user = await db
    .selectFrom('maxuser')
    .innerJoin('person', 'person.personid', 'maxuser.personid')
    .leftJoin('site', 'site.siteid', 'maxuser.defsite')
    .select([
      'maxuser.userid',
      'maxuser.personid',
      'maxuser.status',
      'maxuser.defsite',
      'maxuser.password',
      'maxuser.loginid',
      'person.displayname',
      'site.orgid',
    ])
    .where('maxuser.userid', '=', userid)
    .executeTakeFirst();
  if (!user) return undefined;
  const groups = await db
    .selectFrom('groupuser')
    .innerJoin('maxgroup', 'maxgroup.groupname', 'groupuser.groupname')
    .select(['groupuser.groupname', 'maxgroup.adminmodelogin'])
    .where('groupuser.userid', '=', userid)
    .execute();
  const rights = await db
    .selectFrom('osauth')
    .innerJoin('groupuser', 'groupuser.groupname', 'osauth.groupname')
    .select([
      'osauth.objectstructure',
      'osauth.canread as read',
      'osauth.caninsert as insert',
      'osauth.canupdate as update',
      'osauth.candelete as delete',
    ])
    .where('groupuser.userid', '=', userid)
    .execute();
  return {
    user,
    groups: groups.map((group) => group.groupname),
    adminModeLogin: groups.some((group) => group.adminmodelogin),
    rights,
  };
}
