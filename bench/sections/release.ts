import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { releaseTree } from '../../test/helpers/releases.js';
import { compileServers, rootDir } from '../lib/compile.js';
import { BENCH_ADMIN_PASSWORD, maxauthHeader, sessionCookieHeader } from '../lib/settings.js';
import type { Pair, Scenario, Section, SectionContext } from '../lib/types.js';
import { apiKeyHeader } from './apikey.js';
import { PROPERTY_PATH, checkPropertyAnswer } from './property-call.js';

const run = promisify(execFile);

/** "No slower" within what two like servers measured in alternating slices differ by (bench/README.md, "Release"). */
const RELEASE_TARGET = 0.95;

async function git(...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd: rootDir });
  return stdout.trim();
}

/**
 * The earlier release as a checkout of its own (test/helpers/releases.ts: its files from git, this checkout's
 * `node_modules`, so the two must have the same lock file or the comparison would measure the packages), with its
 * own compiled servers.
 */
async function compiledRelease(commitish: string, log: SectionContext['log']): Promise<string> {
  const commit = await git('rev-parse', '--verify', `${commitish}^{commit}`);
  const lockDiffers = await git('diff', '--name-only', commit, '--', 'package-lock.json');
  if (lockDiffers !== '') {
    throw new Error(
      `${commitish} has another package-lock.json: compare releases with the same dependencies`,
    );
  }
  const tree = await releaseTree(commit);
  log(`release: ${commitish} is ${commit.slice(0, 12)}, in ${tree}`);
  await compileServers(log, tree);
  return tree;
}

/**
 * The same request to this checkout's service and to an earlier release's, each on an in-memory PGlite database
 * migrated and seeded by its own code (so that neither meets a schema it does not know), in alternating slices.
 */
function releasePair(
  tree: string,
  commitish: string,
  name: string,
  headers: Scenario['headers'],
  description: string,
): Pair {
  const scenario = (label: string, server: Scenario['server']): Scenario => ({
    label,
    server,
    path: PROPERTY_PATH,
    ...(headers !== undefined && { headers }),
    check: checkPropertyAnswer,
  });
  const env = { BENCH_STORAGE: 'pglite' };
  return {
    name,
    description,
    target: RELEASE_TARGET,
    subject: scenario('eas', { script: 'eas.ts', env }),
    baseline: scenario(`eas ${commitish}`.slice(0, 20), { script: 'eas.ts', env, tree }),
    sameAnswer(subject, baseline) {
      if (subject !== baseline) {
        throw new Error(`this tree answers "${String(subject)}", the release "${String(baseline)}"`);
      }
    },
  };
}

/**
 * The request path against an earlier release (`BENCH_AGAINST=<commit>`): per-request credentials (which now hand
 * out a sealed session cookie), an API key and a session cookie. Without BENCH_AGAINST the section has no pairs.
 */
export const releaseSection: Section = {
  name: 'release',
  issue: 40,
  summary: `GET ${PROPERTY_PATH} (maxauth, apikey, session cookie) against an earlier release (BENCH_AGAINST)`,
  async prepare(context) {
    const commitish = process.env.BENCH_AGAINST;
    if (!commitish) {
      context.log('release: set BENCH_AGAINST=<commit> to compare with an earlier release; skipped');
      return [];
    }
    const tree = await compiledRelease(commitish, context.log);
    return [
      releasePair(
        tree,
        commitish,
        'getProperty maxauth',
        { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD) },
        'wsmethod:getProperty with maxauth on every request, this tree against the release.',
      ),
      releasePair(
        tree,
        commitish,
        'getProperty apikey',
        apiKeyHeader,
        'wsmethod:getProperty with an apikey header, this tree against the release.',
      ),
      releasePair(
        tree,
        commitish,
        'getProperty session',
        (baseUrl) => sessionCookieHeader(baseUrl, PROPERTY_PATH, 'MAXADMIN', BENCH_ADMIN_PASSWORD),
        'wsmethod:getProperty with the session cookie of one login, this tree against the release.',
      ),
    ];
  },
};
