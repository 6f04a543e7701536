import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyRequest, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { RouteSummary } from '../app.js';
import type { DynamicDatabase } from '../db/schema.js';
import type { Access, Right } from './types.js';

/**
 * Access to every route, walked from the app's own route list so that a route added later is covered without
 * touching this file: whatever is not public refuses a caller without credentials, and every object-structure
 * route refuses a user who lacks the right it needs.
 */

/** A structure SMITH (group VIEWER) holds no right on at all, and one he may only read. */
const NO_RIGHTS = 'MXAPIGROUP';
const READ_ONLY = 'MXAPIASSET';

/** Method overrides a member POST may carry; each one a client sends must be checked against its own right. */
const OVERRIDES = ['PATCH', 'MERGE', 'DELETE', 'BULK', 'SYNC'];

/** Plausible values for path parameters other than `:os` and `:id`, by name; anything else gets `1`. */
const SAMPLE_PARAMETERS: Record<string, string> = {
  attribute: 'status',
  child: 'groupuser',
  childId: '1',
  code: 'BMXAA7901E',
};

describe('access to every route', () => {
  let t: TestApp;
  /** A numeric unique id of an existing record of each structure used here. */
  const existingIds = new Map<string, string>();

  before(async () => {
    t = await startTestApp();
    const db = t.storage.db as unknown as Kysely<DynamicDatabase>;
    for (const name of [NO_RIGHTS, READ_ONLY]) {
      const object = t.services.metadata.findObjectStructure(name)!.root.object;
      const row = await db
        .selectFrom(object.table)
        .select(object.uniqueId)
        .orderBy(object.uniqueId)
        .executeTakeFirstOrThrow();
      existingIds.set(name, String(row[object.uniqueId]));
    }
  });
  after(() => t.close());

  /** The route's URL with every parameter filled in. */
  function urlOf(route: RouteSummary, structure: string): string {
    return route.url
      .replace(/:([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?/g, (_match, name: string) => {
        if (name === 'os') return structure.toLowerCase();
        if (name === 'id') return existingIds.get(structure)!;
        return SAMPLE_PARAMETERS[name] ?? '1';
      })
      .replace(/\*/g, 'any');
  }

  function send(
    route: RouteSummary,
    url: string,
    headers: Record<string, string>,
  ): Promise<LightMyRequestResponse> {
    const options: InjectOptions = { method: route.method as InjectOptions['method'], url, headers };
    if (!['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(route.method)) options.payload = {};
    return t.app.inject(options);
  }

  /** Describes how a response differs from the expected error object, or undefined when it is that object. */
  function mismatch(
    response: LightMyRequestResponse,
    status: number,
    reasonCode: string,
  ): string | undefined {
    let error: Record<string, unknown> | undefined;
    try {
      error = json(response).Error;
    } catch {
      return `${response.statusCode} with a body that is not JSON`;
    }
    if (
      response.statusCode === status &&
      error?.reasonCode === reasonCode &&
      error.statusCode === String(status)
    ) {
      return undefined;
    }
    return `${response.statusCode} ${response.body.slice(0, 200)}`;
  }

  /** The rights a route may need: its declared right, or each right its function picks for the method overrides. */
  function rightsOf(
    access: Extract<Access, { kind: 'objectStructure' }>,
  ): Array<{ right: Right; headers: Record<string, string> }> {
    if (typeof access.right !== 'function') return [{ right: access.right, headers: {} }];
    const pick = access.right;
    return OVERRIDES.flatMap((override) => {
      const headers = { 'x-method-override': override };
      try {
        return [{ right: pick({ headers } as unknown as FastifyRequest), headers }];
      } catch {
        return []; // An override the route refuses outright needs no right.
      }
    });
  }

  test('every route declares its access, refuses callers without credentials and users without the right', async () => {
    const routes = t.services.routes;
    assert.ok(routes.length > 0);
    const objectStructureRoutes = routes.filter((route) => route.access?.kind === 'objectStructure');
    assert.ok(objectStructureRoutes.length > 0, 'the object-structure routes are in the list');
    const problems: string[] = [];
    const smith = maxauth('SMITH');

    for (const route of routes) {
      const name = `${route.method} ${route.url}`;
      const access = route.access;
      if (!access) {
        problems.push(`${name}: declares no access (refused to everyone, so unreachable)`);
        continue;
      }
      if (access.kind === 'public') continue;

      // Unmatched URLs answer 404 before authentication, so a 401 also proves the filled-in URL reached the route.
      const structure = access.kind === 'objectStructure' ? READ_ONLY : NO_RIGHTS;
      const anonymous = await send(route, urlOf(route, structure), {});
      const anonymousProblem = mismatch(anonymous, 401, 'BMXAA7901E');
      if (anonymousProblem) problems.push(`${name} without credentials: ${anonymousProblem}`);

      if (access.kind === 'admin') {
        const refused = mismatch(await send(route, urlOf(route, NO_RIGHTS), smith), 400, 'BMXAA0024E');
        if (refused) problems.push(`${name} as a user who is no administrator: ${refused}`);
      }
      if (access.kind !== 'objectStructure') continue;

      const rights = rightsOf(access);
      if (rights.length === 0) problems.push(`${name}: its right function accepts no method override`);
      for (const { right, headers } of rights) {
        const withoutAny = await send(route, urlOf(route, NO_RIGHTS), { ...smith, ...headers });
        const noRight = mismatch(withoutAny, 400, 'BMXAA9301E');
        if (noRight)
          problems.push(`${name} ${JSON.stringify(headers)} on ${NO_RIGHTS} without any right: ${noRight}`);
        if (right === 'read') continue;
        const readOnly = await send(route, urlOf(route, READ_ONLY), { ...smith, ...headers });
        const missingRight = mismatch(readOnly, 400, 'BMXAA9301E');
        if (missingRight)
          problems.push(
            `${name} ${JSON.stringify(headers)} on ${READ_ONLY} (read only) needing ${right}: ${missingRight}`,
          );
      }
    }
    assert.deepEqual(problems, []);
  });

  test('the administrator passes the same access checks (the refusals are about rights, not the URLs)', async () => {
    const admin = maxauth('MAXADMIN');
    const problems: string[] = [];
    for (const route of t.services.routes) {
      if (route.access?.kind !== 'objectStructure' || route.method !== 'GET') continue;
      const response = await send(route, urlOf(route, READ_ONLY), admin);
      const reasonCode = response.statusCode >= 400 ? json(response).Error?.reasonCode : undefined;
      if (reasonCode === 'BMXAA7901E' || reasonCode === 'BMXAA9301E') {
        problems.push(`${route.method} ${route.url}: ${response.statusCode} ${String(reasonCode)}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
