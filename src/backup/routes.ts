import type { FastifyInstance } from 'fastify';
import { BACKUP_HEADERS } from '../client/index.js';
import type { BackupService } from './service.js';

export interface BackupRoutesOptions {
  backup: BackupService;
}

/**
 * `GET <root>/backup`, administrators only: a consistent archive of the embedded database, streamed as it is read
 * (docs/operations.md, "Backup and restore"). Requests that need the database wait while its files are read.
 */
export async function backupRoutes(app: FastifyInstance, options: BackupRoutesOptions): Promise<void> {
  app.get('/backup', { config: { access: { kind: 'admin' } } }, async (request, reply) => {
    const run = await options.backup.start();
    // A reader that goes away lets the files go at once (the archive's end releases them otherwise).
    request.raw.once('close', () => {
      if (!run.output.readableEnded) run.output.destroy();
    });
    const stamp = run.facts.createdAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    return reply
      .header('content-type', 'application/zip')
      .header('content-disposition', `attachment; filename="eas-backup-${stamp}.zip"`)
      .header('cache-control', 'no-store')
      .header(BACKUP_HEADERS.dataBytes, String(run.dataBytes))
      .header(BACKUP_HEADERS.createdAt, run.facts.createdAt)
      .header(BACKUP_HEADERS.deployment, run.facts.deployment.id)
      .header(BACKUP_HEADERS.schemaVersion, run.facts.schemaVersion)
      .header(BACKUP_HEADERS.release, run.facts.release)
      .send(run.output);
  });
}
