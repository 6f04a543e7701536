import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { hasRight } from '../auth/hook.js';
import { errors } from '../errors.js';
import { linksFor, type ApiRoot, type Links } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import { sendJson } from '../http/reply.js';
import type { MetadataRegistry } from '../metadata/registry.js';
import type { SystemFacts, SystemService } from './service.js';

export interface SystemRoutesOptions {
  root: ApiRoot;
  contextRoot: string;
  system: SystemService;
  metadata: MetadataRegistry;
}

type Query = Record<string, string | undefined>;

const MemberName = Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' });
const MemberParams = Type.Object({ member: MemberName });
const DocumentParams = Type.Object({ member: MemberName, document: MemberName });

/** The monitoring documents of a member (`members/thisserver/<element>`). */
const MEMBER_DOCUMENTS = ['jvm', 'opsystem', 'memory', 'dbinfo'] as const;
type MemberDocument = (typeof MEMBER_DOCUMENTS)[number];

/** The lean=0 form of systeminfo: `rdf:about`, `spi:` names, `rdfs:member` (docs/compatibility.md). */
function namespacedSystemInfo(facts: SystemFacts, href: string): Record<string, unknown> {
  const prefixed = (object: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(object).map(([name, value]) => [`spi:${name}`, value]));
  return {
    'rdf:about': href,
    'spi:appServer': facts.appServer,
    'spi:database': prefixed(facts.database),
    'spi:os': prefixed(facts.os),
    'spi:appVersion': { 'rdfs:member': facts.versionKeys.map((key) => ({ 'spi:versionKey': key })) },
    'spi:deployment': prefixed(facts.deployment),
  };
}

/**
 * The service endpoints clients call on connect (docs/compatibility.md, "Service endpoints"): ping, systeminfo,
 * license, installed products, the apimeta list, and the monitoring documents of `members`, which answer
 * administrators only (BMXAA9051E to others, which clients take as "no permission").
 */
export async function systemRoutes(app: FastifyInstance, options: SystemRoutesOptions): Promise<void> {
  const linksOf = (request: FastifyRequest): Links =>
    linksFor(
      request,
      options.contextRoot,
      options.root,
      readFlag((request.query as Query).relativeuri) === true,
    );
  connectRoutes(app, options, linksOf);
  memberRoutes(app, options, linksOf);
}

/** Every route here answers any logged-in user; the monitoring documents check for an administrator themselves. */
const user = { config: { access: { kind: 'user' as const } } };

/** What a client reads on connect: ping, systeminfo, license, installed products, the apimeta list. */
function connectRoutes(
  app: FastifyInstance,
  { system, root, metadata }: SystemRoutesOptions,
  linksOf: (request: FastifyRequest) => Links,
): void {
  const ping = async (_request: FastifyRequest, reply: FastifyReply) =>
    sendJson(reply, 200, { status: 'OK', thisserver: system.serverName, date: new Date().toISOString() });
  app.get('/ping', user, ping);
  app.get('/ping.jsp', user, ping);

  app.get('/systeminfo', user, async (request, reply) => {
    const facts = await system.facts();
    const href = `${linksOf(request).api}/systeminfo`;
    // Namespaced on /oslc unless lean=1 (or the session's login chose lean), as resources (isLean).
    const lean = readFlag((request.query as Query).lean) ?? request.session?.lean ?? root === 'api';
    if (!lean) return sendJson(reply, 200, namespacedSystemInfo(facts, href));
    return sendJson(reply, 200, {
      href,
      appServer: facts.appServer,
      database: facts.database,
      os: facts.os,
      appVersion: { member: facts.versionKeys.map((versionKey) => ({ versionKey })) },
      // This service's own: which deployment answers (docs/migration.md, "Source").
      deployment: facts.deployment,
    });
  });

  const license = async (request: FastifyRequest, reply: FastifyReply) =>
    sendJson(reply, 200, {
      href: `${linksOf(request).api}/license`,
      // No licence keys: every component of this service is licensed by its open-source licence.
      member: system.products().map((product) => ({
        product: product.name,
        version: product.version,
        license: product.license,
        licensed: true,
      })),
    });
  app.get('/license', user, license);
  app.get('/licenseinfo', user, license);

  app.get('/products', user, async (request, reply) =>
    sendJson(reply, 200, {
      href: `${linksOf(request).api}/products`,
      member: system.products().map((product) => ({
        name: product.name,
        version: product.version,
        releaseLevel: product.releaseLevel,
        maxupg: product.maxupg,
      })),
    }),
  );

  app.get('/apimeta', user, async (request, reply) => {
    const links = linksOf(request);
    const profile = request.user!;
    const member = metadata
      .objectStructures()
      .filter((structure) => hasRight(profile, structure.name, 'read'))
      .map((structure) => ({
        name: structure.name,
        title: structure.description,
        href: `${links.api}/apimeta/${structure.name.toLowerCase()}`,
        resource: `${links.api}/os/${structure.name.toLowerCase()}`,
      }));
    return sendJson(reply, 200, { href: `${links.api}/apimeta`, member });
  });
}

/** The monitoring documents of `members`: administrators only, refused with the code clients expect. */
function memberRoutes(
  app: FastifyInstance,
  { system }: SystemRoutesOptions,
  linksOf: (request: FastifyRequest) => Links,
): void {
  const monitor = (request: FastifyRequest, element: string): void => {
    if (!request.user?.isAdmin) throw errors.monitoringNotAuthorized(element);
  };
  /** `thisserver`, or this server's own name: the member that answers. */
  const thisMember = (request: FastifyRequest, member: string): void => {
    if (member !== 'thisserver' && member !== system.serverName)
      throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? '');
  };
  const memberJson = (links: Links) => ({
    href: `${links.api}/members/thisserver`,
    serverName: system.serverName,
    ...Object.fromEntries(
      MEMBER_DOCUMENTS.map((document) => [document, { href: `${links.api}/members/thisserver/${document}` }]),
    ),
  });

  app.get('/members', user, async (request, reply) => {
    monitor(request, 'members');
    const links = linksOf(request);
    // Only the member that answers: this service keeps no table of its running processes.
    return sendJson(reply, 200, { href: `${links.api}/members`, member: [memberJson(links)] });
  });

  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get('/members/:member', { ...user, schema: { params: MemberParams } }, async (request, reply) => {
    monitor(request, request.params.member);
    thisMember(request, request.params.member);
    return sendJson(reply, 200, memberJson(linksOf(request)));
  });

  typed.get(
    '/members/:member/:document',
    { ...user, schema: { params: DocumentParams } },
    async (request, reply) => {
      const { member, document } = request.params;
      monitor(request, document);
      thisMember(request, member);
      if (!(MEMBER_DOCUMENTS as readonly string[]).includes(document))
        throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? '');
      const href = `${linksOf(request).api}/members/thisserver/${document}`;
      return sendJson(reply, 200, { href, ...(await memberDocument(system, document as MemberDocument)) });
    },
  );
}

async function memberDocument(
  system: SystemService,
  document: MemberDocument,
): Promise<Record<string, unknown>> {
  switch (document) {
    case 'jvm':
      return system.runtime();
    case 'opsystem':
      return system.opsystem();
    case 'memory':
      return system.memory();
    case 'dbinfo':
      return system.dbinfo();
  }
}
