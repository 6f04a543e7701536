import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Value } from 'typebox/value';
import type { UserProfile } from '../auth/types.js';
import { errors } from '../errors.js';
import { sendJson } from '../http/reply.js';
import { SetPropertyBody, SystemServiceQuery } from './schemas.js';
import type { PropertyService } from './service.js';

export interface PropertyRoutesOptions {
  properties: PropertyService;
}

/** Path of the system service under `/oslc` and `/api` (maximo-notes §7). */
export const SYSTEM_SERVICE_PATH = '/service/system';

/** The service name errors and access refusals speak of. */
const SERVICE_NAME = 'system';

type Method = 'GET' | 'POST';

/**
 * The methods of the system service, by lower-case name: `action=wsmethod:<name>` selects one (the `wsmethod:`
 * prefix and the case of the name are not checked, as clients vary). getProperty and getProperties are for every
 * logged-in user, with secure values masked; setProperty and the registry reads (every stored value, and what each
 * server process applied) are for administrators.
 */
const methods: Record<string, { method: Method; admin: boolean }> = {
  getproperty: { method: 'GET', admin: false },
  getproperties: { method: 'GET', admin: false },
  setproperty: { method: 'POST', admin: true },
  describeproperty: { method: 'GET', admin: true },
  describeproperties: { method: 'GET', admin: true },
  getpropertyhistory: { method: 'GET', admin: true },
};

/**
 * `GET|POST <root>/service/system?action=wsmethod:...`: read and set system properties (docs/properties.md).
 * One path serves several operations, so the route admits any logged-in user and each method checks the rest.
 */
export async function propertyRoutes(app: FastifyInstance, options: PropertyRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const { properties } = options;

  routes.get(
    SYSTEM_SERVICE_PATH,
    {
      schema: { querystring: SystemServiceQuery },
      config: { access: { kind: 'user' } },
    },
    async (request, reply) => {
      const user = request.user!;
      const query = request.query;
      const method = methodOf(query, user, 'GET');
      switch (method) {
        case 'getproperty': {
          const name = required(query.propName, 'propName');
          return sendJson(reply, 200, { return: properties.read(name, user) });
        }
        case 'getproperties': {
          const names = nameList(required(query.propNames, 'propNames'), 'propNames');
          const values: Record<string, string> = {};
          for (const name of names) values[name] = properties.read(name, user);
          return sendJson(reply, 200, values);
        }
        case 'describeproperty': {
          const name = required(query.propName, 'propName');
          const [description] = await properties.describe([name]);
          return sendJson(reply, 200, description);
        }
        case 'describeproperties': {
          const names = query.propNames === undefined ? undefined : nameList(query.propNames, 'propNames');
          return sendJson(reply, 200, { member: await properties.describe(names) });
        }
        default: {
          const name = required(query.propName, 'propName');
          return sendJson(reply, 200, { member: await properties.history(name) });
        }
      }
    },
  );

  routes.post(
    SYSTEM_SERVICE_PATH,
    {
      schema: { querystring: SystemServiceQuery },
      config: { access: { kind: 'user' } },
    },
    async (request, reply) => {
      methodOf(request.query, request.user!, 'POST');
      // The body is checked here, not by the route schema, so that a non-administrator is refused whatever it sent.
      const body: unknown = request.body;
      if (!Value.Check(SetPropertyBody, body)) {
        const first = Value.Errors(SetPropertyBody, body)[0];
        throw errors.badRequest(
          `The setProperty body is not valid: ${first ? `${first.instancePath || 'body'} ${first.message}` : 'a JSON object with propName is expected'}.`,
        );
      }
      const result = await properties.set(body, request.user!);
      return sendJson(reply, 200, result);
    },
  );
}

/** The method `action` names, checked against the HTTP method and the caller. */
function methodOf(query: SystemServiceQuery, user: UserProfile, httpMethod: Method): string {
  const action = query.action;
  if (action === undefined || action.trim() === '') throw errors.missingParameter('action');
  const name = action
    .trim()
    .replace(/^wsmethod:/i, '')
    .toLowerCase();
  const method = methods[name];
  if (!method) throw errors.unknownServiceMethod(action, SERVICE_NAME);
  if (method.method !== httpMethod) throw errors.methodNotAllowed(`${httpMethod} with action ${action}`);
  if (method.admin && !user.isAdmin) {
    throw errors.actionNotAllowed(action, 'MAXPROP');
  }
  return name;
}

function required(value: string | undefined, parameter: string): string {
  if (value === undefined || value.trim() === '') throw errors.missingParameter(parameter);
  return value.trim();
}

/** A comma-separated list of names; blanks around names and empty entries are ignored. */
function nameList(text: string, parameter: string): string[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw errors.missingParameter(parameter);
  return names;
}
