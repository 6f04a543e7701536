import { errors, isMaximoError } from '../../errors.js';
import type { MigrationContext } from '../context.js';

/**
 * The hand-off to admin mode: a deploy that changes the configuration goes on only while admin mode allows
 * structural changes; otherwise it is refused as needing admin mode, naming the package.
 */
export async function requireAdminMode(
  context: Pick<MigrationContext, 'guard'>,
  dmpackageid: number,
): Promise<void> {
  try {
    await context.guard.assertStructuralChangesAllowed();
  } catch (error) {
    if (isMaximoError(error) && error.reasonCode === 'BMXAA0578E')
      throw errors.adminModeRequired({ attrName: 'dmpackageid', attrValue: String(dmpackageid) });
    throw error;
  }
}
