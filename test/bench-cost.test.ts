import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { costAccount, stageSamples } from '../bench/lib/cost.js';

const ROOT = '/srv/eas';

interface Frame {
  name: string;
  url: string;
  /** Samples taken in this frame itself. */
  hits?: number;
  children?: Frame[];
}

/** A `.cpuprofile` of the given call tree: each frame's hits become that many samples of its node. */
function profileOf(tree: Frame): { nodes: unknown[]; samples: number[] } {
  const nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children: number[] }> =
    [];
  const samples: number[] = [];
  const add = (frame: Frame): number => {
    const id = nodes.length + 1;
    const node = { id, callFrame: { functionName: frame.name, url: frame.url }, children: [] as number[] };
    nodes.push(node);
    for (let hit = 0; hit < (frame.hits ?? 0); hit++) samples.push(id);
    for (const child of frame.children ?? []) node.children.push(add(child));
    return id;
  };
  add(tree);
  return { nodes, samples };
}

const project = (path: string) => `file://${ROOT}/.cache/bench/${path}`;
const dependency = (path: string) => `file://${ROOT}/node_modules/${path}`;

describe('bench cost account', () => {
  let directory: string | undefined;
  after(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  async function samplesOf(tree: Frame) {
    directory ??= await mkdtemp(join(tmpdir(), 'eas-bench-cost-'));
    const file = join(directory, `${Math.random().toString(36).slice(2)}.cpuprofile`);
    await writeFile(file, JSON.stringify(profileOf(tree)));
    return stageSamples(file, ROOT);
  }

  test('charges each sample to the innermost stage frame; the router and hook runners keep only their own', async () => {
    const samples = await samplesOf({
      name: '(root)',
      url: '',
      children: [
        { name: '(idle)', url: '', hits: 50 },
        { name: 'writev', url: '', hits: 7 },
        { name: '(garbage collector)', url: '', hits: 1 },
        {
          name: 'lookup',
          url: dependency('find-my-way/index.js'),
          hits: 2,
          children: [
            {
              name: 'routeHandler',
              url: dependency('fastify/lib/route.js'),
              hits: 3,
              children: [
                {
                  name: 'hookRunner',
                  url: dependency('fastify/lib/hooks.js'),
                  hits: 1,
                  children: [
                    {
                      name: '',
                      url: project('src/auth/hook.js'),
                      hits: 1,
                      children: [
                        {
                          name: 'authenticate',
                          url: project('src/apikeys/strategy.js'),
                          children: [
                            { name: 'getOrCompute', url: project('src/util/bounded-cache.js'), hits: 4 },
                          ],
                        },
                      ],
                    },
                    { name: 'preHandlerCallback', url: dependency('fastify/lib/handle-request.js'), hits: 2 },
                    {
                      name: 'handler',
                      url: project('src/properties/routes.js'),
                      hits: 2,
                      children: [{ name: 'sendJson', url: project('src/http/reply.js'), hits: 3 }],
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    assert.deepEqual(Object.fromEntries(samples), {
      'socket write': 7,
      'garbage collection': 1,
      'routing and parsing': 2,
      // Fastify's request handling below the router, and the work after the hooks: no stage of the service.
      'http (node, fastify core)': 3 + 2,
      'hook dispatch': 1,
      'access check': 1,
      authentication: 4,
      'service call': 2,
      serialization: 3,
    });
  });

  test("an earlier release's compiled files (the release section) are charged as this tree's are", async () => {
    const release = (path: string) => `file://${ROOT}/.cache/releases/40946c66edd3/.cache/bench/${path}`;
    const samples = await samplesOf({
      name: '',
      url: release('src/auth/hook.js'),
      children: [
        {
          name: 'authenticate',
          url: release('src/auth/strategies/maxauth.js'),
          children: [{ name: 'getOrCompute', url: release('src/util/bounded-cache.js'), hits: 3 }],
        },
      ],
    });
    assert.deepEqual(Object.fromEntries(samples), { authentication: 3 });
  });

  test('a stage costs its share of the samples times the CPU per request', () => {
    const account = costAccount(
      'eas',
      20,
      new Map([
        ['authentication', 1],
        ['socket write', 3],
      ]),
    );
    assert.equal(account.stages.authentication, 5);
    assert.equal(account.stages['socket write'], 15);
    assert.equal(account.stages.metrics, 0);
  });
});
