import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { originOf } from '../audit/context.js';
import { errors } from '../errors.js';
import { sendJson } from '../http/reply.js';
import { copyLimited } from './transfer/package-file.js';
import {
  BackoutBody,
  CreateBody,
  DefinitionBody,
  DeployBody,
  DistributeBody,
  DownloadQuery,
  PackageBody,
  PackageQuery,
  PreviewBody,
  UploadQuery,
} from './schemas.js';
import type { MigrationService } from './service.js';

export interface MigrationRoutesOptions {
  migration: MigrationService;
}

/** Largest package file an upload accepts (bytes); the body is streamed to disk, never held in memory. */
export const MAX_PACKAGE_FILE_BYTES = 2 * 1024 * 1024 * 1024;

/** Content types an upload is sent with: the zip's own, or plain bytes. */
const PACKAGE_FILE_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'];

/** The plugin's instance with TypeBox typing, as each group of routes registers on it. */
type MigrationApp = ReturnType<typeof typed>;
const typed = (app: FastifyInstance) => app.withTypeProvider<TypeBoxTypeProvider>();

const admin = { access: { kind: 'admin' as const } };

/**
 * The Migration Manager endpoints, `<root>/dm/...` (docs/migration.md): administrators only, as the deployed
 * systems grant them to the administration application's users. Registered in the order a package travels.
 */
export async function migrationRoutes(app: FastifyInstance, options: MigrationRoutesOptions): Promise<void> {
  const routes = typed(app);
  const { migration } = options;
  // The upload's body reaches the route as the raw stream (this plugin's routes only).
  app.addContentTypeParser(PACKAGE_FILE_TYPES, (_request, payload, done) => done(null, payload));
  sourceRoutes(routes, migration);
  transferRoutes(routes, migration);
  targetRoutes(routes, migration);
}

/** The source side: create and distribute a package, reset and toggle a CHANGE definition's listener. */
function sourceRoutes(routes: MigrationApp, migration: MigrationService): void {
  routes.post('/dm/create', { schema: { body: CreateBody }, config: admin }, async (request, reply) => {
    const record = await migration.create(
      request.body.pkgdefname,
      request.body.readme,
      request.user!,
      originOf(request),
    );
    return sendJson(reply, 200, record);
  });

  routes.post(
    '/dm/distribute',
    { schema: { body: DistributeBody }, config: admin },
    async (request, reply) => {
      const { pkgdefname, dmpackageid, targetname } = request.body;
      return sendJson(
        reply,
        200,
        await migration.distribute(pkgdefname, dmpackageid, targetname, request.user!, originOf(request)),
      );
    },
  );

  routes.post('/dm/reset', { schema: { body: DefinitionBody }, config: admin }, async (request, reply) => {
    return sendJson(reply, 200, await migration.reset(request.body.pkgdefname));
  });

  routes.post(
    '/dm/toggleactive',
    { schema: { body: DefinitionBody }, config: admin },
    async (request, reply) => {
      return sendJson(reply, 200, await migration.toggleActive(request.body.pkgdefname));
    },
  );
}

/** The transfer: the package file downloaded from the source and uploaded to the target. */
function transferRoutes(routes: MigrationApp, migration: MigrationService): void {
  routes.get(
    '/dm/download',
    { schema: { querystring: DownloadQuery }, config: admin },
    async (request, reply) => {
      const { filename, file } = await migration.download(
        request.query.dmpackagedef,
        request.query.dmpackageid,
        originOf(request),
      );
      return reply
        .code(200)
        .header('content-type', 'application/zip')
        .header('content-disposition', `attachment; filename="${filename.replace(/[^\w.-]/g, '_')}"`)
        .send(file);
    },
  );

  routes.post(
    '/dm/upload',
    { schema: { querystring: UploadQuery }, config: admin },
    async (request, reply) => {
      const body = request.body as AsyncIterable<Buffer> | undefined;
      if (!body || typeof (body as { pipe?: unknown }).pipe !== 'function')
        throw errors.unsupportedMediaType(
          `${request.headers['content-type'] ?? 'none'}: send the zip as application/zip`,
        );
      const path = join(tmpdir(), `eas-dmpackage-${process.pid}-${randomBytes(6).toString('hex')}.zip`);
      try {
        const file = createWriteStream(path, { flags: 'wx', mode: 0o600 });
        try {
          await copyLimited(body, file, MAX_PACKAGE_FILE_BYTES);
        } finally {
          file.end();
          await finished(file);
        }
        return sendJson(
          reply,
          200,
          await migration.upload(path, request.query.filename, request.user!, originOf(request)),
        );
      } finally {
        await rm(path, { force: true });
      }
    },
  );
}

/** The target side: the package record with its progress, preview, deploy, close and delete. */
function targetRoutes(routes: MigrationApp, migration: MigrationService): void {
  // The package record with its progress (docs/migration.md, "Progress"): during a deploy in this process it is
  // answered from memory, without waiting for the deploy's transaction (on PGlite, for the only connection).
  routes.get(
    '/dm/package',
    { schema: { querystring: PackageQuery }, config: admin },
    async (request, reply) => {
      const { pkgdefname, dmpackageid } = request.query;
      return sendJson(reply, 200, await migration.record(pkgdefname, dmpackageid));
    },
  );

  routes.post('/dm/preview', { schema: { body: PreviewBody }, config: admin }, async (request, reply) => {
    const { pkgdefname, dmpackageid, backout } = request.body;
    if (backout === true)
      return sendJson(reply, 200, await migration.previewBackout(pkgdefname, dmpackageid));
    return sendJson(
      reply,
      200,
      await migration.preview(pkgdefname, dmpackageid, request.user!, originOf(request)),
    );
  });

  for (const url of ['/dm/deploy', '/dm/completedeploy'])
    routes.post(url, { schema: { body: DeployBody }, config: admin }, async (request, reply) => {
      const { pkgdefname, dmpackageid, force } = request.body;
      return sendJson(
        reply,
        200,
        await migration.deploy(
          pkgdefname,
          dmpackageid,
          request.user!,
          force === true,
          url === '/dm/completedeploy',
          originOf(request),
        ),
      );
    });

  routes.post('/dm/backout', { schema: { body: BackoutBody }, config: admin }, async (request, reply) => {
    const { pkgdefname, dmpackageid, force } = request.body;
    return sendJson(
      reply,
      200,
      await migration.backout(pkgdefname, dmpackageid, request.user!, force === true, originOf(request)),
    );
  });

  routes.post('/dm/close', { schema: { body: PackageBody }, config: admin }, async (request, reply) => {
    const { pkgdefname, dmpackageid } = request.body;
    return sendJson(
      reply,
      200,
      await migration.close(pkgdefname, dmpackageid, request.user!, originOf(request)),
    );
  });

  routes.post('/dm/delete', { schema: { body: PackageBody }, config: admin }, async (request, reply) => {
    const { pkgdefname, dmpackageid } = request.body;
    await migration.delete(pkgdefname, dmpackageid, originOf(request));
    return sendJson(reply, 200, { pkgdefname: pkgdefname.toUpperCase(), dmpackageid, deleted: true });
  });
}
