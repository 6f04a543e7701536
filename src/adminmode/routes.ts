import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { originOf } from '../audit/context.js';
import { errors } from '../errors.js';
import { sendJson } from '../http/reply.js';
import { formatDate } from '../oslc/values.js';
import { HistoryQuery, TurnOffBody, TurnOnBody } from './schemas.js';
import type { AdminModeService, AdminModeState, AdminModeStatus } from './service.js';
import type { LoggedChange } from './repository.js';

export interface AdminModeRoutesOptions {
  adminMode: AdminModeService;
}

const DEFAULT_HISTORY = 50;

const dateOrNull = (date: Date | null): string | null => (date === null ? null : formatDate(date));

/** The state as clients read it: `state` 0, 1 or 2, and what docs/adminmode.md lists beside it. */
function stateJson(state: AdminModeState): Record<string, unknown> {
  return {
    state: state.state,
    numsessions: state.numsessions,
    logoutmin: state.logoutmin,
    changeby: state.changedBy,
    changedate: dateOrNull(state.changedAt),
    servername: state.serverName,
    logoutdate: dateOrNull(state.logoutAt),
    ondate: dateOrNull(state.onAt),
  };
}

function statusJson(status: AdminModeStatus): Record<string, unknown> {
  return {
    ...stateJson(status),
    remainingsessions: status.ordinarySessions,
    adminsessions: status.adminSessions,
  };
}

function changeJson(change: LoggedChange): Record<string, unknown> {
  return {
    adminmodelogid: change.adminmodelogid,
    action: change.action,
    fromstate: change.fromstate,
    tostate: change.tostate,
    numsessions: change.numsessions,
    logoutmin: change.logoutmin,
    changeby: change.changeby,
    changedate: formatDate(change.changedate),
    servername: change.servername,
    endedsessions: change.endedsessions,
  };
}

/**
 * Admin mode (docs/adminmode.md) under one API root: turn it on and off, read its state and the record of its
 * changes. Administrators only.
 */
export async function adminModeRoutes(app: FastifyInstance, options: AdminModeRoutesOptions): Promise<void> {
  const { adminMode } = options;
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  // Clients send the body as JSON, with or without its content type, or no body at all (off, and on with the
  // defaults): an empty body is an empty object.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, body, done) => {
    const text = String(body).trim();
    if (text === '') {
      done(null, {});
      return;
    }
    try {
      done(null, JSON.parse(text) as unknown);
    } catch {
      done(errors.malformedJson());
    }
  });
  const admin = { access: { kind: 'admin' } } as const;

  routes.post(
    '/adminmode/on',
    { schema: { body: TurnOnBody }, config: admin, preValidation: emptyBodyAsObject },
    async (request, reply) => {
      const state = await adminMode.turnOn(request.user!.userid, request.body, originOf(request));
      return sendJson(reply, 200, stateJson(state));
    },
  );

  routes.post(
    '/adminmode/off',
    { schema: { body: TurnOffBody }, config: admin, preValidation: emptyBodyAsObject },
    async (request, reply) => {
      const state = await adminMode.turnOff(request.user!.userid, originOf(request));
      return sendJson(reply, 200, stateJson(state));
    },
  );

  routes.get('/adminmode/state', { config: admin }, async (_request, reply) =>
    sendJson(reply, 200, statusJson(await adminMode.status())),
  );

  routes.get(
    '/adminmode/history',
    { schema: { querystring: HistoryQuery }, config: admin },
    async (request, reply) => {
      const changes = await adminMode.history(request.query.limit ?? DEFAULT_HISTORY);
      return sendJson(reply, 200, { member: changes.map(changeJson) });
    },
  );
}

/** A request without a body (no content type at all) is validated as an empty object. */
async function emptyBodyAsObject(request: { body: unknown }): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
