import { EasClientError } from './errors.js';
import {
  HttpSession,
  type BinaryAnswer,
  type ClientOptions,
  type QueryValue,
  type StreamedAnswer,
} from './http.js';

export type Member = Record<string, unknown>;

/** One page of a collection (lean JSON). */
export interface CollectionPage {
  member: Member[];
  href?: string;
  responseInfo?: {
    href?: string;
    nextPage?: { href: string };
    previousPage?: { href: string };
    pagenum?: number;
    totalCount?: number;
    totalPages?: number;
  };
}

export interface QueryOptions {
  where?: string;
  /** `oslc.select`; without it members carry only their `href`. */
  select?: string;
  orderBy?: string;
  pageSize?: number;
  /** Adds `totalCount` and `totalPages` to `responseInfo`. */
  collectionCount?: boolean;
  /** Any further query parameters (`savedQuery`, `opmodeor`, ...). */
  params?: Record<string, QueryValue>;
}

export interface LookupOptions extends QueryOptions {
  /** Rest id or numeric unique id of the record; `zombie` (default) or `newmbo` for none. */
  record?: string;
  /** A child record: `{ relation, id }` below `record`. */
  child?: { relation: string; id: string };
  /** Transient values set on the record before the lookup is evaluated. */
  setupdata?: Record<string, unknown>;
}

/** A collection query that is read page by page: `for await (const page of query)` or `.members()`. */
/** An object structure as `apimeta` describes it (the parts clients read). */
export interface ApiMeta {
  name: string;
  attributes: Array<{ name: string }>;
  children: Array<{ name: string }>;
}

export class CollectionQuery implements AsyncIterable<CollectionPage> {
  constructor(
    private readonly http: HttpSession,
    private readonly path: string,
    private readonly query: Record<string, QueryValue>,
  ) {}

  /** Follows `responseInfo.nextPage.href` until the last page. */
  async *[Symbol.asyncIterator](): AsyncIterator<CollectionPage> {
    let page = await this.http.request<CollectionPage>('GET', this.path, { query: this.query });
    for (;;) {
      yield { ...page, member: page.member ?? [] };
      const next = page.responseInfo?.nextPage?.href;
      if (!next) return;
      page = await this.http.request<CollectionPage>('GET', next);
    }
  }

  /** The first page only. */
  async first(): Promise<CollectionPage> {
    for await (const page of this) return page;
    return { member: [] };
  }

  /** Every member of every page, in order. */
  async *members(): AsyncGenerator<Member> {
    for await (const page of this) yield* page.member;
  }

  /** Every member of every page, collected. */
  async all(): Promise<Member[]> {
    const members: Member[] = [];
    for await (const member of this.members()) members.push(member);
    return members;
  }
}

function collectionQuery(options: QueryOptions): Record<string, QueryValue> {
  return {
    'oslc.where': options.where,
    'oslc.select': options.select,
    'oslc.orderBy': options.orderBy,
    'oslc.pageSize': options.pageSize,
    collectioncount: options.collectionCount ? 1 : undefined,
    ...options.params,
  };
}

function segment(value: string): string {
  return encodeURIComponent(value);
}

/** The numeric admin-mode state of an answer, whatever its field is called (the contract names none). */
function stateOf(answer: unknown, request: { method: string; url: string }): number {
  if (typeof answer === 'number') return answer;
  if (typeof answer === 'object' && answer !== null) {
    const record = answer as Record<string, unknown>;
    for (const name of ['state', 'adminmodestate', 'adminmode', 'status']) {
      const value = record[name];
      if (typeof value === 'number') return value;
      if (typeof value === 'string' && /^\d$/.test(value)) return Number(value);
    }
    const numbers = Object.values(record).filter((value) => typeof value === 'number');
    if (numbers.length === 1) return numbers[0] as number;
  }
  throw new EasClientError({
    kind: 'protocol',
    message: 'The admin mode state answer holds no state value.',
    status: 200,
    request,
  });
}

/** A package record (the fields the interface names; the server may send more). */
export interface PackageRecord {
  dmpackageid: number;
  pkgdefname?: string;
  status?: string;
  filename?: string;
  readme?: string;
  source?: string;
  createdate?: string;
  createby?: string;
  distributionmessage?: string;
  /** This service's own (docs/migration.md, "Back-out"): the inverse package a deploy captured. */
  inversepackageid?: number;
  /** Each deploy and back-out of the package, with who and when. */
  history?: Array<{
    action: string;
    status: string;
    message: string | null;
    changeby: string;
    changedate: string;
  }>;
  [field: string]: unknown;
}

export interface PackageRef {
  pkgdefname: string;
  dmpackageid: number;
}

/** Options of deploy and completedeploy (docs/migration.md, "Drift guard"). */
export interface DeployOptions {
  /** Deploy even over records changed on the target since the source last matched them. */
  force?: boolean;
}

/** `force` is sent only when set: the deployed systems know no such field. */
function deployBody(ref: PackageRef, options: DeployOptions): PackageRef & { force?: true } {
  return options.force === true ? { ...ref, force: true } : ref;
}

/**
 * The typed client of one server (src/client/README.md). No server code is imported: it speaks only the wire
 * interface, so it works against any deployment that serves it.
 */
/** Headers of the backup's answer: what the archive holds, sent before its body. */
export const BACKUP_HEADERS = {
  dataBytes: 'x-eas-backup-data-bytes',
  createdAt: 'x-eas-backup-created',
  deployment: 'x-eas-backup-deployment',
  schemaVersion: 'x-eas-backup-schema',
  release: 'x-eas-backup-release',
} as const;

/** A backup as it arrives: the archive's bytes, and what it holds. */
export interface BackupDownload {
  body: StreamedAnswer['body'];
  /** Bytes of the data files in the archive (it is a little larger): for progress. */
  dataBytes: number;
  createdAt: string;
  deployment: string;
  schemaVersion: string;
  release: string;
}

export class EasClient {
  readonly http: HttpSession;

  constructor(options: ClientOptions) {
    this.http = new HttpSession(options);
  }

  /** Logs in now; otherwise the first call does. */
  login(): Promise<void> {
    return this.http.login();
  }

  logout(): Promise<void> {
    return this.http.logout();
  }

  /** The profile of the caller (`/whoami`). */
  whoami(): Promise<Member> {
    return this.http.request<Member>('GET', 'whoami');
  }

  /** A collection query on an object structure. */
  query(objectStructure: string, options: QueryOptions = {}): CollectionQuery {
    return new CollectionQuery(this.http, `os/${segment(objectStructure)}`, collectionQuery(options));
  }

  /** The object structure's description (`apimeta/<os>`): its attributes and child collections. */
  apiMeta(objectStructure: string): Promise<ApiMeta> {
    return this.http.request<ApiMeta>('GET', `apimeta/${segment(objectStructure)}`);
  }

  /** `totalCount` of a filtered collection (`count=1`). */
  async count(objectStructure: string, where?: string): Promise<number> {
    const answer = await this.http.request<{ totalCount: number }>('GET', `os/${segment(objectStructure)}`, {
      query: { count: 1, 'oslc.where': where },
    });
    return answer.totalCount;
  }

  /** One resource by rest id, numeric unique id, or its `href`. */
  get(objectStructure: string, idOrHref: string, select?: string): Promise<Member> {
    const path = /^https?:/.test(idOrHref) ? idOrHref : `os/${segment(objectStructure)}/${segment(idOrHref)}`;
    return this.http.request<Member>('GET', path, { query: { 'oslc.select': select } });
  }

  /** Creates a resource; answers it as stored (`properties: *`). */
  create(objectStructure: string, body: Member): Promise<Member> {
    return this.http.request<Member>('POST', `os/${segment(objectStructure)}`, {
      body,
      headers: { properties: '*' },
    });
  }

  /** Changes the attributes given (a MERGE update of the resource at `href`); answers the resource. */
  update(href: string, body: Member): Promise<Member> {
    return this.http.request<Member>('POST', href, {
      body,
      headers: { 'x-method-override': 'PATCH', patchtype: 'MERGE', properties: '*' },
    });
  }

  /** A child collection of a resource, at its own address (`/os/<os>/<id>/<child>`). */
  children(
    objectStructure: string,
    idOrHref: string,
    child: string,
    options: QueryOptions = {},
  ): CollectionQuery {
    const parent = /^https?:/.test(idOrHref)
      ? idOrHref.replace(/\/+$/, '')
      : `os/${segment(objectStructure)}/${segment(idOrHref)}`;
    return new CollectionQuery(this.http, `${parent}/${segment(child)}`, collectionQuery(options));
  }

  /** The valid values of an attribute (`getlist~<attr>`). */
  lookup(objectStructure: string, attribute: string, options: LookupOptions = {}): CollectionQuery {
    let path = `os/${segment(objectStructure)}/${segment(options.record ?? 'zombie')}`;
    if (options.child) path += `/${segment(options.child.relation)}/${segment(options.child.id)}`;
    path += `/getlist~${segment(attribute)}`;
    const query = collectionQuery(options);
    if (options.setupdata) query.setupdata = JSON.stringify(options.setupdata);
    return new CollectionQuery(this.http, path, query);
  }

  readonly properties = {
    get: async (name: string): Promise<string> =>
      (
        await this.http.request<{ return: string }>('GET', 'service/system', {
          query: { action: 'wsmethod:getProperty', propName: name },
        })
      ).return,
    getMany: (names: readonly string[]): Promise<Record<string, string>> =>
      this.http.request<Record<string, string>>('GET', 'service/system', {
        query: { action: 'wsmethod:getProperties', propNames: names.join(',') },
      }),
    set: (name: string, value: string | null, serverName = 'COMMON'): Promise<Member> =>
      this.http.request<Member>('POST', 'service/system', {
        query: { action: 'wsmethod:setProperty' },
        body: { propName: name, serverName, propValue: value },
      }),
    /** The registry entry, stored and applied values of a property (administrators). */
    describe: (name: string): Promise<Member> =>
      this.http.request<Member>('GET', 'service/system', {
        query: { action: 'wsmethod:describeProperty', propName: name },
      }),
  };

  readonly apikeys = {
    /** Creates (or regenerates) the caller's own key; answers its value. */
    create: async (expirationMinutes = -1): Promise<string> =>
      (
        await this.http.request<{ apikey: string }>('POST', 'apitoken/create', {
          body: { expiration: expirationMinutes },
        })
      ).apikey,
    /** Revokes the caller's own key; false when there was none. */
    revoke: async (): Promise<boolean> => {
      const answer = await this.http.request<{ revoked?: boolean } | undefined>('POST', 'apitoken/revoke');
      return answer?.revoked ?? true;
    },
    /** An administrator creates a key for a user (MXAPIAPIKEY); answers the new key record. */
    createFor: (userid: string, expirationMinutes = -1): Promise<Member> =>
      this.http.request<Member>('POST', 'os/mxapiapikey', {
        body: { userid, expiration: expirationMinutes },
        headers: { properties: '*' },
      }),
    /** Key records (administrators), optionally of one user. */
    list: (userid?: string): Promise<Member[]> =>
      this.query('mxapiapikey', {
        select: 'apikeytokenid,userid,expiration,creationdate,exposedinurl',
        ...(userid !== undefined && { where: `userid="${userid.replace(/"/g, '')}"` }),
        orderBy: '+userid',
      }).all(),
    /** Deletes a key record by its rest id, numeric id or `href`. */
    delete: async (idOrHref: string): Promise<void> => {
      const path = /^https?:/.test(idOrHref) ? idOrHref : `os/mxapiapikey/${segment(idOrHref)}`;
      await this.http.request('DELETE', path);
    },
  };

  /** The embedded database's archive (administrators; docs/operations.md, "Backup and restore"), streamed. */
  readonly backup = {
    download: async (): Promise<BackupDownload> => {
      const answer = await this.http.stream('backup');
      const header = (name: string) => answer.headers.get(name) ?? '';
      return {
        body: answer.body,
        dataBytes: Number(header(BACKUP_HEADERS.dataBytes)) || 0,
        createdAt: header(BACKUP_HEADERS.createdAt),
        deployment: header(BACKUP_HEADERS.deployment),
        schemaVersion: header(BACKUP_HEADERS.schemaVersion),
        release: header(BACKUP_HEADERS.release),
      };
    },
  };

  readonly adminMode = {
    on: async (settings: { numsessions?: number; logoutmin?: number } = {}): Promise<void> => {
      await this.http.request('POST', 'adminmode/on', { body: settings });
    },
    off: async (): Promise<void> => {
      await this.http.request('POST', 'adminmode/off');
    },
    /** 1 on, 2 turning on, 0 off. */
    state: async (): Promise<number> => {
      const answer = await this.http.request('GET', 'adminmode/state');
      return stateOf(answer, { method: 'GET', url: this.http.url('adminmode/state').toString() });
    },
  };

  readonly packages = {
    create: (pkgdefname: string, readme = ''): Promise<PackageRecord> =>
      this.http.request<PackageRecord>('POST', 'dm/create', { body: { pkgdefname, readme } }),
    distribute: (ref: PackageRef, targetname?: string): Promise<PackageRecord> =>
      this.http.request<PackageRecord>('POST', 'dm/distribute', {
        body: { ...ref, ...(targetname !== undefined && { targetname }) },
      }),
    download: (ref: PackageRef): Promise<BinaryAnswer> =>
      this.http.download('dm/download', { dmpackagedef: ref.pkgdefname, dmpackageid: ref.dmpackageid }),
    /** `onSent`: called as the file is sent, with the bytes sent so far and its size. */
    upload: (
      filename: string,
      zip: Uint8Array,
      onSent?: (sent: number, total: number) => void,
    ): Promise<unknown> =>
      this.http.request('POST', 'dm/upload', {
        query: { filename },
        body: zip,
        headers: { 'content-type': 'application/zip' },
        ...(onSent && { onSent }),
      }),
    /** `force`: deploy over records changed on the target since the source last matched them (this service only). */
    deploy: (
      ref: PackageRef,
      options: DeployOptions = {},
    ): Promise<{ warningmsg?: string; [field: string]: unknown }> =>
      this.http.request('POST', 'dm/deploy', { body: deployBody(ref, options) }),
    /** What deploying the package would add, change and delete, per object (on the target). */
    preview: (ref: PackageRef): Promise<unknown> => this.http.request('POST', 'dm/preview', { body: ref }),
    completeDeploy: (ref: PackageRef, options: DeployOptions = {}): Promise<unknown> =>
      this.http.request('POST', 'dm/completedeploy', { body: deployBody(ref, options) }),
    /**
     * Backs out a deployed package with the inverse captured at its deploy (this service only, docs/migration.md
     * "Back-out"); `force`: restore records changed on the target since the deploy.
     */
    backout: (ref: PackageRef, options: DeployOptions = {}): Promise<{ warningmsg?: string }> =>
      this.http.request('POST', 'dm/backout', { body: deployBody(ref, options) }),
    /**
     * The package record with its progress (`progressstatus`, answered during a deploy too) and, on this service, its
     * inverse package and history.
     */
    record: (ref: PackageRef): Promise<PackageRecord> =>
      this.http.request<PackageRecord>('GET', 'dm/package', {
        query: { pkgdefname: ref.pkgdefname, dmpackageid: ref.dmpackageid },
      }),
    /** What backing out the package would write, and the records changed since its deploy. */
    previewBackout: (ref: PackageRef): Promise<Record<string, unknown>> =>
      this.http.request('POST', 'dm/preview', { body: { ...ref, backout: true } }),
    close: (ref: PackageRef): Promise<PackageRecord> =>
      this.http.request<PackageRecord>('POST', 'dm/close', { body: ref }),
    delete: (ref: PackageRef): Promise<unknown> => this.http.request('POST', 'dm/delete', { body: ref }),
    reset: (pkgdefname: string): Promise<unknown> =>
      this.http.request('POST', 'dm/reset', { body: { pkgdefname } }),
    toggleActive: (pkgdefname: string): Promise<unknown> =>
      this.http.request('POST', 'dm/toggleactive', { body: { pkgdefname } }),
  };
}
