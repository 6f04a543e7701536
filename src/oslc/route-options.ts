import type { FastifyRequest } from 'fastify';
import { linksFor, type ApiRoot, type Links } from '../http/links.js';
import type { CollectionParams } from './collection-params.js';
import type { ResponseOptions } from './response.js';
import type { ResourceService } from './service.js';

/** What the object-structure routes, and the modules answering resources of them (lookups), are given. */
export interface OslcRoutesOptions {
  root: ApiRoot;
  contextRoot: string;
  resources: ResourceService;
  /**
   * Largest page a client may ask for on an object structure (canonical name, `MXAPIASSET`); a larger
   * `oslc.pageSize` is refused (`mxe.oslc.maxpagesize`, `mxe.oslc.<os>.maxpagesize`).
   */
  maxPageSize: (osName: string) => number;
  /** Seconds a stable page set may stay unused before it expires (`mxe.oslc.idleexiry`). */
  idleExpiry: () => number;
  /** Whether every collection answer carries `totalCount` (`mxe.oslc.collectioncount`, docs/compatibility.md). */
  collectionCount?: () => boolean;
}

/**
 * Idle expiry of stable page sets when no system property says otherwise: 5 minutes (src/oslc/query/README.md,
 * "Paging").
 */
export const DEFAULT_IDLE_EXPIRY_SECONDS = 300;

/**
 * /oslc answers namespaced JSON unless `lean=1`; /api answers lean JSON unless `lean=0` (docs/compatibility.md); a
 * request without `lean` in a session whose login chose one answers in that form ("Sessions").
 */
export function isLean(
  root: ApiRoot,
  lean: boolean | undefined,
  session: { readonly lean: boolean | null } | null = null,
): boolean {
  return lean ?? session?.lean ?? root === 'api';
}

export function responseOptionsFor(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  params: CollectionParams,
): Omit<ResponseOptions, 'domains'> {
  const links: Links = linksFor(request, options.contextRoot, options.root, params.relative);
  return {
    links,
    osName: (request.params as { os: string }).os.toLowerCase(),
    lean: isLean(options.root, params.lean, request.session),
    dropNulls: params.dropNulls,
    internalValues: params.internalValues,
    collectionRefs: params.collectionRefs,
  };
}
