import type { Kysely } from 'kysely';
import { sessionsEndedEvent } from '../audit/events.js';
import { NO_AUDIT, type AuditRecorder, type RequestOrigin } from '../audit/types.js';
import type { SessionService } from '../auth/sessions.js';
import type { Database } from '../db/schema.js';
import { errors } from '../errors.js';
import { findSessionHashes, findSessionId, listLiveSessions, type ActiveSessionRow } from './repository.js';

export interface ActiveSession extends ActiveSessionRow {
  /** The session the caller's own request runs in. */
  current: boolean;
}

/**
 * The live sessions of every process, for administrators (docs/console.md, "Sessions"), and ending one. Ending goes
 * through `SessionService.end`: the delete and its notification commit together and the answer waits for every
 * process's confirmation, so the session's next request is refused wherever it lands.
 */
export class ActiveSessionService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly sessions: SessionService,
    /** Where an administrator's ending is recorded, in its transaction (docs/audit.md). */
    private readonly audit: AuditRecorder = NO_AUDIT,
    private readonly now: () => number = Date.now,
  ) {}

  /** `currentId`: the session hash of the caller's own session, marked `current`. */
  async list(currentId: string | undefined): Promise<ActiveSession[]> {
    const now = this.now();
    const rows = await listLiveSessions(this.db, new Date(now), this.sessions.activeSince(now));
    const current = currentId === undefined ? undefined : await findSessionId(this.db, currentId);
    return rows.map((row) => ({ ...row, current: row.maxsessionid === current }));
  }

  async end(maxsessionid: number, origin?: RequestOrigin): Promise<void> {
    const hashes = await findSessionHashes(this.db, maxsessionid);
    if (!hashes) throw errors.sessionNotFound(String(maxsessionid));
    await this.sessions.end({ id: hashes.sessionhash, tokenId: hashes.tokenhash }, (transaction) =>
      this.audit.record(transaction, {
        ...sessionsEndedEvent(
          'administrator',
          [{ sessionhash: hashes.sessionhash, userid: hashes.userid }],
          hashes.userid,
        ),
        origin,
      }),
    );
  }
}
