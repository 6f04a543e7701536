import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/**
 * The cost account of the request path (`--cost`): every CPU sample of a server's profile is charged to one stage of
 * the request, and each stage's share of the samples, times the CPU microseconds per request measured in the same
 * window, is what the stage costs a request. A sample is charged to the innermost frame on its stack that belongs to
 * a stage: the access hook calling the session lookup is authentication, the lookup's cookie parser too, and a header
 * the request-id echo sets is charged to logging, which caused it. Frames of no stage (Fastify's core, Node's HTTP,
 * the project's generic helpers) pass the sample on to their callers; a stack with no stage frame at all is the HTTP
 * server's own work, which the bare baseline pays as well.
 */
export const STAGES = [
  'routing and parsing',
  'authentication',
  'access check',
  'admin-mode check',
  'cors',
  'metrics',
  'service call',
  'serialization',
  'logging and request id',
  'hook dispatch',
  'reply and headers',
  'http (node, fastify core)',
  'socket write',
  'garbage collection',
] as const;
export type Stage = (typeof STAGES)[number];

interface Frame {
  functionName: string;
  /** Path below the project root or node_modules (`src/auth/hook.ts`, `fastify/lib/reply.js`), or a `node:` URL. */
  path: string;
}

/** A rule: the frames of a file (prefix) and, optionally, only some of its functions. */
interface Rule {
  stage: Stage;
  path: string | RegExp;
  functions?: RegExp;
  /**
   * The frame's own samples only, not those of what it calls: the router and the hook runners call the rest of the
   * request (the route's handling, the next hooks), which belongs to the stages below them or to no stage.
   */
  selfOnly?: boolean;
}

/**
 * Ordered: the first rule a frame matches decides its stage. The access hook's own file holds both authentication
 * and the check of what the route declared; the properties module's route is the service call.
 */
const RULES: readonly Rule[] = [
  {
    stage: 'access check',
    path: 'src/auth/hook.',
    functions: /^(authorize|hasRight|checkCsrf|keyOnlyStrategy)$/,
  },
  {
    stage: 'authentication',
    path: 'src/auth/hook.',
    functions: /^(authenticate|strategyOf|profileOf|admitted|joinSession)$/,
  },
  { stage: 'access check', path: 'src/auth/hook.' },
  { stage: 'admin-mode check', path: 'src/adminmode/' },
  { stage: 'authentication', path: /^src\/(auth|apikeys)\// },
  { stage: 'authentication', path: /^cookie\// },
  { stage: 'cors', path: 'src/http/cors.' },
  { stage: 'metrics', path: /^(src\/metrics\/|prom-client\/)/ },
  { stage: 'serialization', path: /^(src\/http\/reply\.|fast-json-stringify\/)/ },
  { stage: 'serialization', path: /^fastify\/lib\/(reply|error-serializer)\./, functions: /^serialize/ },
  {
    stage: 'service call',
    path: /^(src\/(properties|oslc|system|lookups|metadata|db)\/|pg|pg-protocol|kysely|@electric-sql)/,
  },
  {
    stage: 'logging and request id',
    path: /^(src\/http\/request-id\.|pino|pino-std-serializers|sonic-boom)/,
  },
  { stage: 'logging and request id', path: /^fastify\/lib\/(logger|log-controller|req-id)/ },
  // Fastify listens for the end of every response when it has a logger (the bare baseline has none).
  {
    stage: 'logging and request id',
    path: 'fastify/lib/reply.',
    functions: /^(setupResponseListeners|onResFinished|onResponseCallback)$/,
  },
  { stage: 'hook dispatch', path: 'fastify/lib/hooks.', selfOnly: true },
  { stage: 'routing and parsing', path: 'find-my-way/', selfOnly: true },
  { stage: 'routing and parsing', path: /^(fast-querystring|fast-uri|ajv)\// },
  { stage: 'routing and parsing', path: /^src\/http\/(query-string|parameter-names|route-path)\./ },
  { stage: 'routing and parsing', path: 'fastify/lib/validation.' },
  // Validators Ajv compiled (Function constructor: no file).
  { stage: 'routing and parsing', path: '', functions: /^validate\d*$/ },
  { stage: 'reply and headers', path: /^(src\/http\/wire\.|fastify\/lib\/reply\.)/ },
  // A baseline's route (bench/servers/) is its service call, its own JSON.stringify included.
  { stage: 'service call', path: 'bench/servers/' },
  { stage: 'routing and parsing', path: /^src\/app\./, functions: /^(querystringParser|frameworkErrors)$/ },
  { stage: 'logging and request id', path: /^src\/app\./ },
];

/** The rule that decides a frame's stage, if any. */
function ruleOf(frame: Frame): Pick<Rule, 'stage' | 'selfOnly'> | undefined {
  if (frame.functionName === '(garbage collector)') return { stage: 'garbage collection' };
  if (frame.path === '' && /^writev?|writeUtf8String|writeBuffer/.test(frame.functionName))
    return { stage: 'socket write' };
  for (const rule of RULES) {
    const inFile =
      rule.path === ''
        ? frame.path === ''
        : typeof rule.path === 'string'
          ? frame.path.startsWith(rule.path)
          : rule.path.test(frame.path);
    if (inFile && (rule.functions === undefined || rule.functions.test(frame.functionName))) return rule;
  }
  return undefined;
}

/**
 * The project's compiled files (`.cache/bench/src/...`, or an earlier release's under `.cache/releases/<commit>/`:
 * the `release` section) and packages as the rules name them.
 */
function framePath(url: string, root: string): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const inModules = /node_modules\/(.+)$/.exec(path);
  if (inModules) return inModules[1]!;
  if (path.startsWith('node:')) return path;
  const inProject = path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
  return inProject.replace(/^\.cache\/releases\/[0-9a-f]+\//, '').replace(/^\.cache\/bench\//, '');
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** Samples per stage of a `.cpuprofile` (idle samples left out). */
export async function stageSamples(file: string, root: string): Promise<Map<Stage, number>> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] };
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<Stage, number>();
  const root0 = profile.nodes[0];
  if (!root0) return totals;
  // Depth first, each node knowing the innermost stage above it.
  const stack: Array<{ id: number; stage: Stage | undefined }> = [{ id: root0.id, stage: undefined }];
  while (stack.length > 0) {
    const { id, stage: above } = stack.pop()!;
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url } = node.callFrame;
    const rule = ruleOf({ functionName, path: framePath(url, root) });
    const stage = rule?.stage ?? above;
    const count = hits.get(id) ?? 0;
    if (count > 0 && functionName !== '(idle)' && functionName !== '(program)') {
      const charged = stage ?? 'http (node, fastify core)';
      totals.set(charged, (totals.get(charged) ?? 0) + count);
    }
    const passed = rule?.selfOnly === true ? above : stage;
    for (const child of node.children ?? []) stack.push({ id: child, stage: passed });
  }
  return totals;
}

/** One scenario's account: CPU µs per request in total and per stage. */
export interface CostAccount {
  label: string;
  cpuMicrosecondsPerRequest: number;
  stages: Partial<Record<Stage, number>>;
}

export function costAccount(
  label: string,
  cpuMicrosecondsPerRequest: number,
  samples: ReadonlyMap<Stage, number>,
): CostAccount {
  const total = [...samples.values()].reduce((sum, count) => sum + count, 0);
  const stages: Partial<Record<Stage, number>> = {};
  for (const stage of STAGES) {
    const count = samples.get(stage) ?? 0;
    stages[stage] = total === 0 ? 0 : Number(((count / total) * cpuMicrosecondsPerRequest).toFixed(2));
  }
  return { label, cpuMicrosecondsPerRequest, stages };
}

/** The stages side by side, one column per scenario, and the difference of the last two (service - baseline). */
export function formatCostTable(title: string, accounts: readonly CostAccount[]): string {
  const columns = accounts.map((account) => account.label);
  const withDifference = accounts.length === 2;
  const header = ['stage (cpu us per request)', ...columns, ...(withDifference ? ['difference'] : [])];
  const cell = (value: number) => value.toFixed(1);
  const rows = STAGES.map((stage) => {
    const values = accounts.map((account) => account.stages[stage] ?? 0);
    return [stage, ...values.map(cell), ...(withDifference ? [cell(values[1]! - values[0]!)] : [])];
  });
  const totals = accounts.map((account) => account.cpuMicrosecondsPerRequest);
  rows.push(['total', ...totals.map(cell), ...(withDifference ? [cell(totals[1]! - totals[0]!)] : [])]);
  const widths = header.map((text, column) =>
    Math.max(text.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((text, column) => (column === 0 ? text.padEnd(widths[0]!) : text.padStart(widths[column]!)))
      .join('  ');
  return [title, line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join(
    '\n',
  );
}
