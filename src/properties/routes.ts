import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Value } from 'typebox/value';
import { originOf } from '../audit/context.js';
import type { UserProfile } from '../auth/types.js';
import { errors } from '../errors.js';
import { sendEncodedJson, sendJson } from '../http/reply.js';
import { PropertyAnswers } from './answers.js';
import { registerWriteBodyParsers } from '../oslc/bodies.js';
import { SetPropertyBody, SystemServiceQuery } from './schemas.js';
import type { PropertyService } from './service.js';

export interface PropertyRoutesOptions {
  properties: PropertyService;
}

/** Path of the system service under `/oslc` and `/api` (docs/properties.md). */
export const SYSTEM_SERVICE_PATH = '/service/system';

/** The service name errors and access refusals speak of. */
const SERVICE_NAME = 'system';

type Method = 'GET' | 'POST';

interface SystemMethod {
  /** Lower case: what the `action` names once normalized. */
  name: string;
  method: Method;
  admin: boolean;
}

/**
 * The methods of the system service: `action=wsmethod:<name>` selects one (the `wsmethod:` prefix and the case of the
 * name are not checked, as clients vary). getProperty and getProperties are for every logged-in user, with secure
 * values masked; setProperty and the registry reads (every stored value, and what each server process applied) are
 * for administrators.
 */
const METHODS: readonly (Omit<SystemMethod, 'name'> & { spelled: string })[] = [
  { spelled: 'getProperty', method: 'GET', admin: false },
  { spelled: 'getProperties', method: 'GET', admin: false },
  { spelled: 'setProperty', method: 'POST', admin: true },
  { spelled: 'describeProperty', method: 'GET', admin: true },
  { spelled: 'describeProperties', method: 'GET', admin: true },
  { spelled: 'getPropertyHistory', method: 'GET', admin: true },
];

/** By normalized name, and by the spellings clients send (`wsmethod:getProperty`), which need no normalizing. */
const methodsByName = new Map<string, SystemMethod>();
for (const { spelled, method, admin } of METHODS) {
  const entry = { name: spelled.toLowerCase(), method, admin };
  for (const key of [entry.name, spelled, `wsmethod:${spelled}`]) methodsByName.set(key, entry);
}

/**
 * `GET|POST <root>/service/system?action=wsmethod:...`: read and set system properties (docs/properties.md).
 * One path serves several operations, so the route admits any logged-in user and each method checks the rest.
 */
export async function propertyRoutes(app: FastifyInstance, options: PropertyRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const { properties } = options;

  const answers = new PropertyAnswers();
  routes.get(
    SYSTEM_SERVICE_PATH,
    {
      schema: { querystring: SystemServiceQuery },
      config: { access: { kind: 'user' } },
    },
    (request, reply) => {
      const user = request.user!;
      const query = request.query;
      const method = methodOf(query, user, 'GET');
      // Values come from this process's registry: answered without a promise. The registry reads query the database.
      if (method === 'getproperty') {
        sendEncodedJson(reply, answers.of(properties.read(required(query.propName, 'propName'), user)));
        return;
      }
      if (method === 'getproperties') {
        sendJson(reply, 200, currentValues(query, user, properties));
        return;
      }
      return registryRead(method, query, properties).then((body) => sendJson(reply, 200, body));
    },
  );

  // Only setProperty reads a body: its parsers (and their preParsing hook) stay off the GET route.
  await app.register(async (writes) => {
    registerWriteBodyParsers(writes);
    writes.withTypeProvider<TypeBoxTypeProvider>().post(
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
        const result = await properties.set(body, request.user!, originOf(request));
        return sendJson(reply, 200, result);
      },
    );
  });
}

/** The method `action` names, checked against the HTTP method and the caller. */
function methodOf(query: SystemServiceQuery, user: UserProfile, httpMethod: Method): string {
  const action = query.action;
  if (action === undefined || action.trim() === '') throw errors.missingParameter('action');
  const method =
    methodsByName.get(action) ??
    methodsByName.get(
      action
        .trim()
        .replace(/^wsmethod:/i, '')
        .toLowerCase(),
    );
  if (!method) throw errors.unknownServiceMethod(action, SERVICE_NAME);
  if (method.method !== httpMethod) throw errors.methodNotAllowed(`${httpMethod} with action ${action}`);
  if (method.admin && !user.isAdmin) {
    throw errors.actionNotAllowed(action, 'MAXPROP');
  }
  return method.name;
}

/** getProperties: the values by name. */
function currentValues(
  query: SystemServiceQuery,
  user: UserProfile,
  properties: PropertyService,
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of nameList(required(query.propNames, 'propNames'), 'propNames'))
    values[name] = properties.read(name, user);
  return values;
}

/** describeProperty, describeProperties, getPropertyHistory (administrators). */
async function registryRead(
  method: string,
  query: SystemServiceQuery,
  properties: PropertyService,
): Promise<unknown> {
  switch (method) {
    case 'describeproperty': {
      const [description] = await properties.describe([required(query.propName, 'propName')]);
      return description;
    }
    case 'describeproperties':
      return {
        member: await properties.describe(
          query.propNames === undefined ? undefined : nameList(query.propNames, 'propNames'),
        ),
      };
    default:
      return { member: await properties.history(required(query.propName, 'propName')) };
  }
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
