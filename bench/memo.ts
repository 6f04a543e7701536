// `npm run bench -- memo`: what each memo cache of the request path saves per request. In-process, no server:
// each cache's work is timed computed afresh and answered from the cache, interleaved round by round so that the
// machine's other load falls on both alike. The figures are quoted in src/auth/README.md, src/http/README.md and
// src/oslc/query/README.md beside the caches they justify.
import { parseCookie } from 'cookie';
import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseQueryString } from '../src/http/query-string.js';
import { readCollectionParams } from '../src/oslc/collection-params.js';
import { parseSelect, parseWhere } from '../src/oslc/query/index.js';
import { BoundedCache } from '../src/util/bounded-cache.js';

export interface MemoResult {
  cache: string;
  /** Nanoseconds per call, computed afresh. */
  computed: number;
  /** Nanoseconds per call, answered from the cache. */
  cached: number;
}

const QUERY =
  'lean=1&oslc.select=assetnum,description,status,location,siteid&oslc.where=status%3D%22OPERATING%22%20and%20siteid%3D%22BEDFORD%22&oslc.orderBy=-assetnum&oslc.pageSize=20&pageno=2';
const WHERE = 'status="OPERATING" and siteid="BEDFORD" and assetnum>"1000"';
const COOKIE = randomBytes(32).toString('base64url');
const COOKIE_HEADER = `JSESSIONID=${COOKIE}; LtpaToken2=${randomBytes(32).toString('base64url')}`;
const hash = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Median nanoseconds per call of `work` over `rounds` rounds of `calls` calls. */
function timeRounds(work: () => unknown, rounds: number, calls: number): number[] {
  const perRound: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const start = performance.now();
    for (let call = 0; call < calls; call += 1) work();
    perRound.push(((performance.now() - start) * 1e6) / calls);
  }
  return perRound;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

function compare(cache: string, compute: () => unknown): MemoResult {
  const memo = new BoundedCache<string, unknown>(16);
  const cached = () => memo.getOrCompute('key', compute);
  const computedRounds: number[] = [];
  const cachedRounds: number[] = [];
  // Warm both paths, then alternate them so that neither gets the quieter half of the run.
  timeRounds(compute, 3, 2_000);
  timeRounds(cached, 3, 2_000);
  for (let round = 0; round < 15; round += 1) {
    computedRounds.push(...timeRounds(compute, 1, 5_000));
    cachedRounds.push(...timeRounds(cached, 1, 5_000));
  }
  return { cache, computed: median(computedRounds), cached: median(cachedRounds) };
}

export function measureMemoCaches(): MemoResult[] {
  const query = parseQueryString(QUERY);
  return [
    compare('session cookie digest (SessionService)', () => hash(COOKIE)),
    compare('cookie header (sessionOfRequest)', () => parseCookie(COOKIE_HEADER)),
    compare('getProperty answer (PropertyAnswers)', () => Buffer.from(JSON.stringify({ return: '1000' }))),
    compare('query string (createQueryStringParser)', () => parseQueryString(QUERY)),
    compare('collection parameters (collection-reply)', () => readCollectionParams(query)),
    compare('where clause tree (parsed)', () => parseWhere(WHERE)),
    compare('select clause tree (parsed)', () => parseSelect('assetnum,description,status,location,siteid')),
  ];
}

export function formatMemo(results: MemoResult[]): string {
  const lines = ['cache                                        computed ns   cached ns   saved ns/request'];
  for (const result of results) {
    lines.push(
      `${result.cache.padEnd(44)} ${result.computed.toFixed(0).padStart(11)} ${result.cached.toFixed(0).padStart(11)} ${(result.computed - result.cached).toFixed(0).padStart(18)}`,
    );
  }
  return lines.join('\n');
}
