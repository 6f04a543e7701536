import type { FastifyInstance } from 'fastify';
import { originOf } from '../audit/context.js';
import { sendJson } from '../http/reply.js';
import { formatDate } from '../oslc/values.js';
import { ApplyBody, DbConfigQuery } from './schemas.js';
import type { CustomAttributeRow, DbConfigService, PendingChangeRow } from './service.js';

export interface DbConfigRoutesOptions {
  dbconfig: DbConfigService;
}

/**
 * Database configuration (docs/dbconfig.md). Changes are staged through the object structure MXAPIMAXATTRIBUTECFG;
 * these routes apply them (`POST <root>/dbconfig/apply`) and list the custom attributes in force
 * (`GET <root>/dbconfig/attributes`). Both are for administrators only.
 */
export async function dbconfigRoutes(app: FastifyInstance, options: DbConfigRoutesOptions): Promise<void> {
  const { dbconfig } = options;
  // Apply takes no body: whatever a client sends (nothing, `{}`, with or without a content type) is passed over.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, _body, done) =>
    done(null, undefined),
  );

  app.post(
    '/dbconfig/apply',
    { schema: { querystring: DbConfigQuery, body: ApplyBody }, config: { access: { kind: 'admin' } } },
    async (request, reply) => {
      const result = await dbconfig.applyPending(request.user!.userid, { origin: originOf(request) });
      return sendJson(reply, 200, {
        structural: result.structural,
        applied: result.applied.map(describeChange),
      });
    },
  );

  app.get(
    '/dbconfig/attributes',
    { schema: { querystring: DbConfigQuery }, config: { access: { kind: 'admin' } } },
    async (_request, reply) => {
      const attributes = await dbconfig.listCustomAttributes();
      return sendJson(reply, 200, { member: attributes.map(describeAttribute) });
    },
  );
}

function describeChange(change: PendingChangeRow) {
  return {
    objectname: change.objectname,
    attributename: change.attributename,
    changetype: change.changetype,
  };
}

function describeAttribute(attribute: CustomAttributeRow) {
  return {
    ...attribute,
    changedate: attribute.changedate ? formatDate(attribute.changedate) : null,
  };
}
