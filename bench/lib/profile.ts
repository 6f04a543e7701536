import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The parts of a V8 `.cpuprofile` (what `node --cpu-prof` writes) this summary reads. */
interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
    children?: number[];
  }>;
  startTime: number;
  endTime: number;
  samples: number[];
}

export interface ProfileEntry {
  name: string;
  ms: number;
  /** Percent of the busy time. */
  share: number;
}

export interface ProfileSummary {
  /** Sampled time that was not idle, in milliseconds. */
  busyMs: number;
  /** Time spent in each package or source file itself (self time), largest first. */
  areasSelf: ProfileEntry[];
  /** Time spent in or below the project's own functions (src/, bench/), counted once per stack, largest first. */
  projectInclusive: ProfileEntry[];
  /** Self time by function, largest first. */
  functionsSelf: ProfileEntry[];
}

const IDLE = new Set(['(idle)', '(program)']);

/** `src/oslc/routes.ts`, `fastify`, `pg`, `node:internal` or the V8 pseudo-frame for a call frame. */
function areaOf(url: string, functionName: string, root: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (inModules) return inModules[1]!;
  if (path.startsWith('node:')) return path.split('/')[0]!.replace(/^node:internal.*/, 'node:internal');
  // The servers run compiled (bench/lib/compile.ts): `.cache/bench/src/...` is the project's `src/...`.
  return relative(root, path).replace(/^\.cache\/bench\//, '');
}

const isProjectArea = (area: string): boolean => area.startsWith('src/') || area.startsWith('bench/');

function top(entries: ReadonlyMap<string, number>, busyMs: number, count: number): ProfileEntry[] {
  return [...entries]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, ms]) => ({
      name,
      ms: Number(ms.toFixed(1)),
      share: Number(((ms / Math.max(busyMs, 1e-9)) * 100).toFixed(1)),
    }));
}

/**
 * Where a server child spent its CPU time: self time per package or file and per function, and the time spent in or
 * below each of the project's functions, which follows the request path (access hook, parameters, plan, compile,
 * execute, shaping, send) step by step.
 */
export async function summarizeProfile(file: string, root: string, count = 15): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const sampleMs = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples.length);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);

  const selfByArea = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const inclusiveByFunction = new Map<string, number>();
  let busyMs = 0;
  const rootNode = profile.nodes[0];
  if (!rootNode) return { busyMs: 0, areasSelf: [], projectInclusive: [], functionsSelf: [] };
  const stack: Array<{ id: number; callers: ReadonlySet<string> }> = [
    { id: rootNode.id, callers: new Set() },
  ];
  while (stack.length > 0) {
    const { id, callers } = stack.pop()!;
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const area = areaOf(url, functionName, root);
    const name = `${functionName || '(anonymous)'} ${area}${lineNumber > 0 ? `:${lineNumber + 1}` : ''}`;
    const here = isProjectArea(area) ? new Set(callers).add(name) : callers;
    const selfMs = (hits.get(id) ?? 0) * sampleMs;
    if (selfMs > 0 && !IDLE.has(functionName)) {
      busyMs += selfMs;
      selfByArea.set(area, (selfByArea.get(area) ?? 0) + selfMs);
      selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + selfMs);
      for (const caller of here)
        inclusiveByFunction.set(caller, (inclusiveByFunction.get(caller) ?? 0) + selfMs);
    }
    for (const child of node.children ?? []) stack.push({ id: child, callers: here });
  }
  return {
    busyMs: Number(busyMs.toFixed(0)),
    areasSelf: top(selfByArea, busyMs, count),
    projectInclusive: top(inclusiveByFunction, busyMs, count * 2),
    functionsSelf: top(selfByFunction, busyMs, count),
  };
}

export function formatProfile(title: string, summary: ProfileSummary): string {
  const lines = [`${title}: ${summary.busyMs} ms busy`];
  const section = (heading: string, entries: readonly ProfileEntry[]) => {
    lines.push(`  ${heading}:`);
    for (const entry of entries)
      lines.push(
        `    ${entry.share.toFixed(1).padStart(5)}%  ${entry.ms.toFixed(0).padStart(7)} ms  ${entry.name}`,
      );
  };
  section('self time by package or file', summary.areasSelf);
  section('time in and below project functions', summary.projectInclusive);
  section('self time by function', summary.functionsSelf);
  return lines.join('\n');
}
