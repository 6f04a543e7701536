import type { FastifyRequest } from 'fastify';
import type { MaybePromise } from '../util/maybe-promise.js';

export type Right = 'read' | 'insert' | 'update' | 'delete';

export interface ObjectStructureRights {
  read: boolean;
  insert: boolean;
  update: boolean;
  delete: boolean;
}

/** Who is calling, with everything the per-request checks need (held in memory, see AuthService). */
export interface UserProfile {
  userid: string;
  personid: string;
  displayname: string | null;
  /** The name the user logs in with (`maxuser.loginid`), when the profile was read with it. */
  loginid?: string | null;
  status: string;
  defaultSite: string | null;
  defaultOrg: string | null;
  groups: readonly string[];
  /** Member of the administrators' group: every right on every object structure. */
  isAdmin: boolean;
  /** A member of a group that may log in during admin mode (`maxgroup.adminmodelogin`, docs/adminmode.md). */
  adminModeLogin: boolean;
  /** Rights by object-structure name (upper case), merged over the user's groups. */
  rights: ReadonlyMap<string, ObjectStructureRights>;
  /**
   * Changes with the user's password (a digest of its stored hash): sealed session cookies carry it, and one issued
   * before a password change is refused (docs/security.md, "Session cookies").
   */
  credentialStamp: string;
}

/**
 * What a route requires, declared in its `config.access` and enforced by one hook (auth/hook.ts):
 * nothing, a logged-in user, an administrator, or a right on the object structure named in the path.
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'user' }
  | { kind: 'admin' }
  | { kind: 'objectStructure'; right: Right | ((request: FastifyRequest) => Right) };

/**
 * What a strategy's success means to the access hook:
 * - `login`: a password was verified (maxauth, BASIC): a session cookie on the login routes only, elsewhere none
 *   (per-request credentials, docs/compatibility.md "Sessions");
 * - `session`: a session cookie: the request runs in that session (writes of browser sessions need `csrftoken`);
 * - `token`: a bearer token such as an API key: silent, no session unless `wantsSession` says so.
 */
export type StrategyKind = 'login' | 'session' | 'token';

/** One way of presenting credentials (maxauth, BASIC, session cookie, API key): one file each. */
export interface AuthStrategy {
  readonly name: string;
  readonly kind: StrategyKind;
  /** Whether the request carries this scheme's credentials at all. */
  applies(request: FastifyRequest): boolean;
  /**
   * The caller's user id, or a MaximoError (thrown or rejected) when the credentials are refused; at once when the
   * credentials are known to this process (a cached session or key), later when they must be checked.
   */
  authenticate(request: FastifyRequest): MaybePromise<string>;
  /** For `token` strategies: whether this request also asks for a session cookie (API key with `enablesession=1`). */
  wantsSession?(request: FastifyRequest): boolean;
}

/**
 * Who may call while the deployment is in admin mode (src/adminmode, docs/adminmode.md), decided from the cached
 * state and the profile: no database read.
 */
export interface CallerAdmission {
  /** A login or API-key call: throws the refusal when the user may not call now. */
  admitCaller(profile: UserProfile): void;
  /** A request in an existing session: the warning header's value to answer with, if any; throws when it ended. */
  sessionWarning(profile: UserProfile): string | undefined;
}
