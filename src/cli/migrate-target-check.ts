import { EasClientError, type EasClient } from '../client/index.js';
import { EXIT } from './exit-codes.js';
import { StepFailure } from './migrate-failures.js';
import { reasonAndMessage } from './migrate-preview.js';

/** Release level of the deployed systems' migration operations (`maxupg` `V7613-...`; docs/compatibility.md). */
const MIGRATION_RELEASE = 7613;

/**
 * Before anything is created on the source: the target answers (exit 5 when it does not), takes the credentials
 * (exit 3), they are an administrator's (exit 4: deploy, preview and admin mode are theirs) and its release has the
 * migration operations (exit 4). A package is then never left half-made for a target that could not take it.
 * Answers what the step reports: the user and the release.
 */
export async function checkedTarget(target: EasClient): Promise<string> {
  const home = await target.http.request<Record<string, unknown> | undefined>('GET', '');
  const who = await target.whoami();
  const userid = String(who.userid ?? who.loginUserName ?? 'the user');
  try {
    await target.adminMode.state();
  } catch (error) {
    // Refused (BMXAA0024E, 403): not an administrator; a failed login or a server fault goes on up as it is.
    if (
      !(error instanceof EasClientError) ||
      error.kind !== 'server' ||
      error.status === 401 ||
      error.status >= 500
    )
      throw error;
    throw new StepFailure(
      EXIT.refused,
      `${userid} is not an administrator of the target (${reasonAndMessage(error)}); nothing was created on the source`,
      error,
    );
  }
  const maxupg = typeof home?.maxupg === 'string' ? home.maxupg : undefined;
  const level = maxupg === undefined ? undefined : Number(/^V(\d+)/.exec(maxupg)?.[1] ?? NaN);
  if (level !== undefined && !(level >= MIGRATION_RELEASE)) {
    throw new StepFailure(
      EXIT.refused,
      `the target's release ${maxupg} has no migration operations (${MIGRATION_RELEASE} or later needed); nothing was created on the source`,
    );
  }
  return `${userid}, administrator${maxupg === undefined ? '' : `, release ${maxupg}`}`;
}
