// Logout messages an identity provider sends are accepted once (docs/federated-login.md, "Replay of logout
// messages"): an OIDC back-channel logout token by its issuer and `jti`, a SAML LogoutRequest by its issuer and ID.
// Remembered in the database (table `logoutmessage`, migration 0030-federated-bounds), which every process shares, until the message
// could no longer be accepted anyway; a replay to any process then ends nothing.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { FederatedScheme } from './service.js';

/** The columns' lengths: a longer id or issuer cannot be remembered, so the message is refused. */
const MAX_ISSUER_LENGTH = 512;
const MAX_MESSAGE_ID_LENGTH = 256;

export interface LogoutMessageId {
  scheme: FederatedScheme;
  issuer: string;
  messageId: string;
  /** When the message stops being acceptable by its own dates (skew included): kept until then. */
  expires: Date;
}

/** What spending a message found: first use, a replay, or an id too long to remember. */
export type LogoutMessageUse = 'first' | 'replayed' | 'unrememberable';

/**
 * Records the message as used, in one statement (the primary key lets one process through when two receive it at
 * once); messages whose time has passed are deleted first. Logouts are rare: the delete costs nothing noticeable.
 */
export async function spendLogoutMessage(
  db: Kysely<Database>,
  message: LogoutMessageId,
  now: Date,
): Promise<LogoutMessageUse> {
  if (
    message.messageId === '' ||
    message.messageId.length > MAX_MESSAGE_ID_LENGTH ||
    message.issuer.length > MAX_ISSUER_LENGTH
  ) {
    return 'unrememberable';
  }
  await db.deleteFrom('logoutmessage').where('expires', '<=', now).execute();
  const inserted = await db
    .insertInto('logoutmessage')
    .values({
      scheme: message.scheme,
      issuer: message.issuer,
      messageid: message.messageId,
      expires: message.expires,
    })
    .onConflict((conflict) => conflict.columns(['scheme', 'issuer', 'messageid']).doNothing())
    .returning('messageid')
    .executeTakeFirst();
  return inserted === undefined ? 'replayed' : 'first';
}
