import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

/**
 * Cross-origin requests from browser applications (docs/operations.md, "Cross-origin requests"), configured by the
 * system properties the deployed systems use. Nothing is allowed until `mxe.oslc.aclalloworigin` names an origin.
 * The values are read from the property registry on every request (a map lookup, src/properties/service.ts), so a
 * change made on any process applies on every process without a restart; each value is parsed again only when it
 * changes.
 */

export const CORS_PROPERTIES = {
  allowOrigin: 'mxe.oslc.aclalloworigin',
  allowMethods: 'mxe.oslc.aclallowmethods',
  allowHeaders: 'mxe.oslc.aclallowheaders',
  exposeHeaders: 'mxe.oslc.aclexposeheaders',
} as const;

/** What a preflight allows when `mxe.oslc.aclallowmethods` has no value: the methods browsers never preflight. */
const SIMPLE_METHODS = ['GET', 'HEAD', 'POST'];

type PropertyValue = (name: string) => string | undefined;

interface CorsPolicy {
  /** The property values the policy was built from, in the order of CORS_PROPERTIES. */
  sources: ReadonlyArray<string | undefined>;
  anyOrigin: boolean;
  origins: ReadonlySet<string>;
  methods: readonly string[];
  /** Header values as sent, or undefined when the property has no value. */
  allowHeaders: string | undefined;
  exposeHeaders: string | undefined;
}

const PROPERTY_NAMES = Object.values(CORS_PROPERTIES);

/** A comma-separated list, blanks and empty entries dropped. */
function listOf(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** `https://App.example.com:443/` → `https://app.example.com`: origins compare as browsers write them. */
function normalOrigin(origin: string): string {
  const trimmed = origin.trim().replace(/\/+$/, '');
  try {
    const url = new URL(trimmed);
    return url.origin === 'null' ? trimmed.toLowerCase() : url.origin;
  } catch {
    return trimmed.toLowerCase();
  }
}

function policyOf(sources: ReadonlyArray<string | undefined>): CorsPolicy {
  const [allowOrigin, allowMethods, allowHeaders, exposeHeaders] = sources;
  const origins = listOf(allowOrigin);
  const methods = listOf(allowMethods).map((method) => method.toUpperCase());
  return {
    sources,
    anyOrigin: origins.includes('*'),
    origins: new Set(origins.map(normalOrigin)),
    methods: methods.length > 0 ? methods : SIMPLE_METHODS,
    allowHeaders: joined(allowHeaders),
    exposeHeaders: joined(exposeHeaders),
  };
}

function joined(value: string | undefined): string | undefined {
  const entries = listOf(value);
  return entries.length > 0 ? entries.join(', ') : undefined;
}

/** The CORS rules of the current property values, parsed again only when one of them changes. */
export class CorsRules {
  private policy: CorsPolicy = policyOf([]);

  constructor(private readonly property: PropertyValue) {}

  /** The policy of the values this process applies now. */
  current(): CorsPolicy {
    const { sources } = this.policy;
    for (let index = 0; index < PROPERTY_NAMES.length; index += 1) {
      if (this.property(PROPERTY_NAMES[index]!) !== sources[index]) {
        this.policy = policyOf(PROPERTY_NAMES.map((name) => this.property(name)));
        break;
      }
    }
    return this.policy;
  }
}

/** Whether any origin is configured: answers then vary by `Origin`. */
function configured(policy: CorsPolicy): boolean {
  return policy.anyOrigin || policy.origins.size > 0;
}

/** Whether a browser application on this origin may read the answers. */
function allows(policy: CorsPolicy, origin: string): boolean {
  return policy.anyOrigin || (policy.origins.size > 0 && policy.origins.has(normalOrigin(origin)));
}

function allowsMethod(policy: CorsPolicy, method: string): boolean {
  return policy.methods.includes('*') || policy.methods.includes(method.trim().toUpperCase());
}

/**
 * The headers of an answer to a cross-origin request: `Access-Control-Allow-Origin` (the caller's origin, never
 * `*`) and the exposed headers, only for an allowed origin. Added before authentication, so that a refusal (401)
 * reaches the application as the error object rather than as an opaque network failure: the access hook runs it
 * first on every request (src/auth/hook.ts), which saves a hook of its own. A request without an `Origin` header
 * (every non-browser client) costs one header lookup.
 */
export function corsHeaders(rules: CorsRules): (request: FastifyRequest, reply: FastifyReply) => void {
  return (request, reply) => {
    const origin = request.headers.origin;
    if (origin !== undefined) allowOrigin(rules, origin, reply);
  };
}

function allowOrigin(rules: CorsRules, origin: string, reply: FastifyReply): void {
  const policy = rules.current();
  if (!configured(policy)) return;
  reply.header('vary', 'Origin');
  if (!allows(policy, origin)) return;
  reply.header('access-control-allow-origin', origin);
  if (policy.exposeHeaders !== undefined) reply.header('access-control-expose-headers', policy.exposeHeaders);
}

const PreflightParams = Type.Object({ '*': Type.String() });

/**
 * `OPTIONS <context root>/...`: the preflight a browser sends before a cross-origin call that is not simple. Public,
 * since browsers send no credentials on a preflight; it reads nothing and answers 204 with the allowed methods and
 * headers only for an allowed origin asking for an allowed method, and no CORS header otherwise.
 */
export async function corsRoutes(
  app: FastifyInstance,
  options: { contextRoot: string; rules: CorsRules },
): Promise<void> {
  const { contextRoot, rules } = options;
  app.options(
    `${contextRoot}/*`,
    { schema: { params: PreflightParams }, config: { access: { kind: 'public' } } },
    (request, reply) => answerPreflight(request, reply, rules),
  );
}

function answerPreflight(request: FastifyRequest, reply: FastifyReply, rules: CorsRules): FastifyReply {
  const policy = rules.current();
  const origin = request.headers.origin;
  const method = request.headers['access-control-request-method'];
  // Exposed headers concern the answers of calls, not the preflight.
  reply.removeHeader('access-control-expose-headers');
  if (
    origin === undefined ||
    typeof method !== 'string' ||
    !allows(policy, origin) ||
    !allowsMethod(policy, method)
  ) {
    // Set by the hook for an allowed origin; a preflight for a method not allowed gets none.
    reply.removeHeader('access-control-allow-origin');
    return reply.code(204).send();
  }
  reply.header('access-control-allow-methods', policy.methods.join(', '));
  if (policy.allowHeaders !== undefined) reply.header('access-control-allow-headers', policy.allowHeaders);
  return reply.code(204).send();
}
