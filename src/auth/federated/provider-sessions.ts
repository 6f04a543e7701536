// Which identity-provider session opened each federated session (migration 0018-federated-sessions), so that a
// logout the provider sends (SAML LogoutRequest, OIDC logout token) finds the sessions to end, and a logout started
// here can name the provider's session (docs/federated-login.md, "Single logout").
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SessionService } from '../sessions.js';
import type { FederatedScheme } from './service.js';

/** The provider's side of a session: who it signed in, in which of its sessions. */
export interface ProviderSession {
  subject: string;
  subjectFormat?: string | undefined;
  providerSession?: string | undefined;
}

const SUBJECT_LENGTH = 512;
const SESSION_LENGTH = 256;

/**
 * Remembers the provider's session of a session just opened. Values longer than the columns are not kept: such a
 * session ends with a logout by subject only, never with a cut value matching another's.
 */
export async function rememberProviderSession(
  db: Kysely<Database>,
  sessionhash: string,
  scheme: FederatedScheme,
  provider: ProviderSession,
): Promise<void> {
  if (provider.subject.length > SUBJECT_LENGTH) return;
  await db
    .insertInto('federatedsession')
    .values({
      sessionhash,
      scheme,
      subject: provider.subject,
      subjectformat:
        provider.subjectFormat !== undefined && provider.subjectFormat.length <= SESSION_LENGTH
          ? provider.subjectFormat
          : null,
      providersession:
        provider.providerSession !== undefined && provider.providerSession.length <= SESSION_LENGTH
          ? provider.providerSession
          : null,
    })
    .execute();
}

/** The provider's side of one session, when a federated sign-in opened it. */
export async function providerSessionOf(
  db: Kysely<Database>,
  sessionhash: string,
): Promise<ProviderSession | undefined> {
  const row = await db
    .selectFrom('federatedsession')
    .select(['subject', 'subjectformat', 'providersession'])
    .where('sessionhash', '=', sessionhash)
    .executeTakeFirst();
  return (
    row && {
      subject: row.subject,
      subjectFormat: row.subjectformat ?? undefined,
      providerSession: row.providersession ?? undefined,
    }
  );
}

/**
 * Ends, on every process, the sessions the provider opened for `subject` (only those of its session
 * `providerSession`, when named; by the session alone when no subject is named): each through the session service's
 * own ending, which answers once every process has dropped it (`ChangeBus.confirm`). The users of the sessions ended,
 * one entry per session.
 */
export async function endProviderSessions(
  db: Kysely<Database>,
  sessions: SessionService,
  scheme: FederatedScheme,
  named: { subject?: string | undefined; providerSession?: string | undefined },
): Promise<string[]> {
  const { subject, providerSession } = named;
  if (subject === undefined && providerSession === undefined) return [];
  let query = db
    .selectFrom('federatedsession')
    .innerJoin('maxsession', 'maxsession.sessionhash', 'federatedsession.sessionhash')
    .select(['maxsession.sessionhash', 'maxsession.tokenhash', 'maxsession.userid'])
    .where('federatedsession.scheme', '=', scheme);
  if (subject !== undefined) query = query.where('federatedsession.subject', '=', subject);
  if (providerSession !== undefined) {
    query =
      subject === undefined
        ? query.where('federatedsession.providersession', '=', providerSession)
        : // A session whose provider session was not recorded ends with any logout of its subject.
          query.where((eb) =>
            eb.or([
              eb('federatedsession.providersession', '=', providerSession),
              eb('federatedsession.providersession', 'is', null),
            ]),
          );
  }
  const rows = await query.execute();
  for (const row of rows) await sessions.end({ id: row.sessionhash, tokenId: row.tokenhash });
  return rows.map((row) => row.userid);
}
