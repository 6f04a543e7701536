import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../errors.js';
import type { ObjectStructure } from '../metadata/registry.js';
import { sendJson } from '../http/reply.js';
import { nodeAt, structureSchema } from './json-schema.js';
import type { OslcRoutesOptions } from './route-options.js';
import { QueryStringSchema } from './schemas.js';

const SchemaParams = Type.Object({
  os: Type.String({ pattern: '^[A-Za-z0-9_]{1,30}$' }),
  '*': Type.Optional(Type.String({ maxLength: 512 })),
});

/**
 * `GET <root>/jsonschemas/<os>` and `.../<os>/<child>[/<grandchild>...]` (docs/compatibility.md, "JSON schemas"):
 * the JSON Schema of an object structure or of one of its child objects; `oslc.select=*` inlines the children.
 */
export function schemaRoutes(app: FastifyInstance, options: OslcRoutesOptions): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const handler = {
    schema: { params: SchemaParams, querystring: QueryStringSchema },
    config: { access: { kind: 'objectStructure', right: 'read' } as const },
  };
  const answer = (
    structure: ObjectStructure,
    os: string,
    rest: string | undefined,
    select: string | undefined,
  ) => {
    const path = (rest ?? '').split('/').filter((segment) => segment !== '');
    const node = nodeAt(
      structure,
      path.map((segment) => segment.toLowerCase()),
    );
    if (!node) throw errors.routeNotFound('GET', `${options.root}/jsonschemas/${os}/${rest ?? ''}`);
    const parent = path.length === 0 ? undefined : nodeAt(structure, path.slice(0, -1))?.object.name;
    const inline = (select ?? '').split(',').some((item) => item.trim() === '*');
    return structureSchema(structure, node, path, parent, options.root, os.toLowerCase(), inline);
  };
  routes.get('/jsonschemas/:os', handler, async (request, reply) =>
    sendJson(
      reply,
      200,
      answer(request.objectStructure!, request.params.os, undefined, request.query['oslc.select']),
    ),
  );
  routes.get('/jsonschemas/:os/*', handler, async (request, reply) =>
    sendJson(
      reply,
      200,
      answer(request.objectStructure!, request.params.os, request.params['*'], request.query['oslc.select']),
    ),
  );
}
