// `npm run scaleout [-- --requests <n>] [--database-url <url>]`: see docs/deploy.md.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';

/**
 * Two server processes (`npm start`'s compiled entry) on one PostgreSQL schema, HAProxy round-robin in front, and
 * a client that only ever talks to HAProxy. Every step changes shared state through the balancer (a login, a
 * logout, an API key and its revocation, a system property, admin mode) and then checks that every following
 * request, whichever process answers it, sees the change: one consistent deployment.
 */

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);
const ADMIN_PASSWORD = 'scaleout-admin-pw';
const DEMO_PASSWORD = 'scaleout-demo-pw';
const MASTER_KEY = 'eas-scaleout-master-key-0123456789abcdef';
const SERVER_ENTRY = join(rootDir, 'dist', 'bundle', 'server.js');
/** A public page answering 200 without credentials: HAProxy's health check. */
const HEALTH_PATH = '/maximo/health/ready';
/**
 * How long a change may take to reach the other process: the change bus delivers it after the writer's commit
 * (docs/deploy.md). Past it, every request must see the change, and none may see the old state again.
 */
const PROPAGATION_MS = Number(process.env.SCALEOUT_PROPAGATION_MS ?? 1000);

const log = (message: string): void => void process.stderr.write(`scaleout: ${message}\n`);

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (typeof address !== 'object' || address === null) throw new Error('no free port');
  return address.port;
}

/** HAProxy from Debian when it is missing, as .ci/run installs slapd. */
function haproxyBinary(): string {
  for (const candidate of ['/usr/sbin/haproxy', '/usr/bin/haproxy'])
    if (existsSync(candidate)) return candidate;
  log('installing HAProxy (apt-get install haproxy)');
  const apt = (args: string[]) => {
    const command = process.getuid?.() === 0 ? ['apt-get', ...args] : ['sudo', 'apt-get', ...args];
    execFileSync(command[0]!, command.slice(1), {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  };
  apt(['update', '-q']);
  apt(['install', '-y', '-q', 'haproxy']);
  if (!existsSync('/usr/sbin/haproxy')) throw new Error('apt-get install haproxy left no /usr/sbin/haproxy');
  return '/usr/sbin/haproxy';
}

interface Child {
  name: string;
  process: ChildProcess;
  output: () => string;
}

/** Every process this run started, stopped at the end whether or not it became ready. */
const spawned: Child[] = [];

async function startChild(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: ((output: string) => boolean) | 'at once',
): Promise<Child> {
  const child = spawn(command, args, { cwd: rootDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  spawned.push({ name, process: child, output: () => output });
  let output = '';
  if (ready === 'at once') return { name, process: child, output: () => output };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready within 60 s:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${String(code)}:\n${output}`));
    });
  });
  return { name, process: child, output: () => output };
}

async function stopChild(child: Child): Promise<void> {
  const { process: proc } = child;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, 'exit');
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** What one request through the balancer got: status, body, and which process answered (HAProxy's header). */
interface Answer {
  status: number;
  body: string;
  server: string;
  headers: Headers;
}

class Client {
  constructor(private readonly base: string) {}

  async request(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ): Promise<Answer> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      redirect: 'manual',
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text,
      server: response.headers.get('x-eas-backend') ?? '?',
      headers: response.headers,
    };
  }
}

const maxauth = (user: string, password: string) => ({
  maxauth: Buffer.from(`${user}:${password}`).toString('base64'),
});

interface Check {
  step: string;
  requests: number;
  servers: Record<string, number>;
  /** Milliseconds from the change's answer until both processes had shown it (request latency included). */
  propagationMs: number;
  /** Answers with the old state before both processes had shown the new one (within PROPAGATION_MS). */
  stale: number;
}

/**
 * After a change answered through the balancer: repeats `probe` until both processes have shown the new state
 * (`sees` true), at most PROPAGATION_MS, then `requests` more, every one of which must see it. A process that
 * showed the new state and then the old one fails at once.
 */
async function expectEverywhere(
  step: string,
  requests: number,
  probe: () => Promise<Answer>,
  sees: (answer: Answer) => boolean,
): Promise<Check> {
  const started = performance.now();
  const seen = new Set<string>();
  const servers: Record<string, number> = {};
  const last = new Map<string, string>();
  let stale = 0;
  let count = 0;
  const once = async (): Promise<boolean> => {
    const answer = await probe();
    count++;
    servers[answer.server] = (servers[answer.server] ?? 0) + 1;
    const ok = sees(answer);
    last.set(answer.server, `HTTP ${answer.status} ${answer.body.slice(0, 120)}`);
    if (ok) seen.add(answer.server);
    else if (seen.has(answer.server))
      throw new Error(
        `${step}: ${answer.server} went back to the old state (HTTP ${answer.status}: ${answer.body.slice(0, 200)})`,
      );
    else stale++;
    return ok;
  };
  while (seen.size < 2) {
    const ok = await once();
    const elapsed = performance.now() - started;
    if (!ok && elapsed > PROPAGATION_MS)
      throw new Error(
        `${step}: a process still shows the old state ${elapsed.toFixed(0)} ms after the change; last answers: ` +
          [...last].map(([server, text]) => `${server}: ${text}`).join('; '),
      );
  }
  const propagationMs = Math.round(performance.now() - started);
  for (let index = 0; index < requests; index++) {
    const answer = await probe();
    count++;
    servers[answer.server] = (servers[answer.server] ?? 0) + 1;
    if (!sees(answer))
      throw new Error(
        `${step}: request ${index + 1} on ${answer.server}: HTTP ${answer.status}: ${answer.body.slice(0, 200)}`,
      );
  }
  if (Object.keys(servers).length < 2)
    throw new Error(`${step}: only ${Object.keys(servers).join()} answered`);
  return { step, requests: count, servers, propagationMs, stale };
}

function expectStatus(answer: Answer, status: number, what: string): void {
  if (answer.status !== status)
    throw new Error(
      `${what}: expected HTTP ${status}, got ${answer.status} from ${answer.server}: ${answer.body.slice(0, 300)}`,
    );
}

const cookieOf = (answer: Answer): Record<string, string> => {
  const cookies = answer.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0]!.trim())
    .filter((cookie) => cookie !== '');
  if (cookies.length === 0) throw new Error('the login answered no session cookie');
  return { cookie: cookies.join('; ') };
};

/** Who the checks act as, and what they ask for. */
interface ScenarioContext {
  client: Client;
  requests: number;
  admin: Record<string, string>;
  wilson: Record<string, string>;
}

const WHOAMI = '/maximo/oslc/whoami';

/** What one process does is seen by the other: sessions, API keys, properties, admin mode. */
async function scenario(client: Client, requests: number): Promise<Check[]> {
  const context: ScenarioContext = {
    client,
    requests,
    admin: maxauth('MAXADMIN', ADMIN_PASSWORD),
    wilson: maxauth('WILSON', DEMO_PASSWORD),
  };
  return [
    ...(await sessionChecks(context)),
    ...(await apiKeyChecks(context)),
    ...(await propertyChecks(context)),
    ...(await adminModeChecks(context)),
  ];
}

/**
 * 1. A login through one process (the login route: other requests with credentials store no session); its session
 * cookie is honoured by both. 2. Logout through the balancer ends it on both.
 */
async function sessionChecks({ client, requests, wilson }: ScenarioContext): Promise<Check[]> {
  const checks: Check[] = [];
  const login = await client.request('POST', '/maximo/oslc/login', wilson);
  expectStatus(login, 200, 'login');
  const session = cookieOf(login);
  checks.push(
    await expectEverywhere(
      'session of one login',
      requests,
      () => client.request('GET', WHOAMI, session),
      (a) => a.status === 200,
    ),
  );
  expectStatus(await client.request('POST', '/maximo/oslc/logout', session), 200, 'logout');
  checks.push(
    await expectEverywhere(
      'session after logout',
      requests,
      () => client.request('GET', WHOAMI, session),
      (a) => a.status === 401,
    ),
  );
  return checks;
}

/** 3. An API key works on both; revoked through the balancer, it is refused by both (400 BMXAA9549E, docs/apikeys.md). */
async function apiKeyChecks({ client, requests, wilson }: ScenarioContext): Promise<Check[]> {
  const checks: Check[] = [];
  const created = await client.request('POST', '/maximo/oslc/apitoken/create', wilson, { expiration: -1 });
  expectStatus(created, 200, 'apitoken/create');
  const apikey = { apikey: (JSON.parse(created.body) as { apikey: string }).apikey };
  checks.push(
    await expectEverywhere(
      'new API key',
      requests,
      () => client.request('GET', WHOAMI, apikey),
      (a) => a.status === 200,
    ),
  );
  const revoked = await client.request('POST', '/maximo/oslc/apitoken/revoke', apikey);
  expectStatus(revoked, 200, 'apitoken/revoke');
  if (!(JSON.parse(revoked.body) as { revoked?: boolean }).revoked)
    throw new Error(`apitoken/revoke on ${revoked.server} revoked nothing: ${revoked.body}`);
  checks.push(
    await expectEverywhere(
      'revoked API key',
      requests,
      () => client.request('GET', WHOAMI, apikey),
      (a) => a.status === 400 && a.body.includes('BMXAA9549E'),
    ),
  );
  return checks;
}

/** 4. A system property set through one process is read back from both. */
async function propertyChecks({ client, requests, admin }: ScenarioContext): Promise<Check[]> {
  const property = '/maximo/oslc/service/system?action=wsmethod:getProperty&propName=mxe.oslc.maxpagesize';
  const value = String(100 + Math.floor(Math.random() * 800));
  const set = await client.request('POST', '/maximo/oslc/service/system?action=wsmethod:setProperty', admin, {
    propName: 'mxe.oslc.maxpagesize',
    propValue: value,
  });
  expectStatus(set, 200, 'setProperty');
  return [
    await expectEverywhere(
      `property set to ${value}`,
      requests,
      () => client.request('GET', property, admin),
      (a) => a.status === 200 && (JSON.parse(a.body) as { return?: string }).return === value,
    ),
  ];
}

/** 5. Admin mode on: ordinary logins are refused by both, the administrator still gets in; off: open again. */
async function adminModeChecks({ client, requests, admin, wilson }: ScenarioContext): Promise<Check[]> {
  const checks: Check[] = [];
  expectStatus(
    await client.request('POST', '/maximo/oslc/adminmode/on', admin, { numsessions: 50, logoutmin: 0 }),
    200,
    'adminmode/on',
  );
  checks.push(
    await expectEverywhere(
      'admin mode on: WILSON refused',
      requests,
      () => client.request('GET', WHOAMI, wilson),
      (a) => a.status === 401,
    ),
  );
  checks.push(
    await expectEverywhere(
      'admin mode on: state 1',
      requests,
      () => client.request('GET', '/maximo/oslc/adminmode/state', admin),
      (a) => a.status === 200 && (JSON.parse(a.body) as { state?: number }).state === 1,
    ),
  );
  expectStatus(await client.request('POST', '/maximo/oslc/adminmode/off', admin), 200, 'adminmode/off');
  checks.push(
    await expectEverywhere(
      'admin mode off: WILSON logs in',
      requests,
      () => client.request('GET', WHOAMI, wilson),
      (a) => a.status === 200,
    ),
  );
  return checks;
}

/** The two processes of the deployment, on one schema, each on a free port; answers their ports. */
async function startServers(databaseUrl: string, schema: string): Promise<number[]> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('EAS_') && !['PORT', 'HOST', 'DATABASE_URL'].includes(name)) clean[name] = value;
  const ports: number[] = [];
  // The settings every process of a deployment must share (docs/deploy.md); only the name and port differ.
  for (const name of ['eas-a', 'eas-b']) {
    const port = await freePort();
    ports.push(port);
    log(`starting ${name} on 127.0.0.1:${port} (schema ${schema})`);
    await startChild(
      name,
      process.execPath,
      [SERVER_ENTRY],
      {
        ...clean,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        EAS_DB_SCHEMA: schema,
        EAS_MASTER_KEY: MASTER_KEY,
        EAS_ADMIN_PASSWORD: ADMIN_PASSWORD,
        EAS_DEMO: '1',
        EAS_DEMO_PASSWORD: DEMO_PASSWORD,
        EAS_SERVER_NAME: name,
        EAS_LOG_LEVEL: 'warn',
      },
      (output) => output.includes('listening on'),
    );
  }
  return ports;
}

/** HAProxy in front of both, round-robin, each answer naming its process. */
function haproxyConfig(frontPort: number, ports: readonly number[]): string {
  return [
    'global',
    '  log stderr format raw local0 warning',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 30s',
    '  timeout server 30s',
    'frontend eas',
    `  bind 127.0.0.1:${frontPort}`,
    '  default_backend eas',
    'backend eas',
    '  balance roundrobin',
    `  option httpchk GET ${HEALTH_PATH}`,
    // Which process answered, for the checks (a deployment need not expose it).
    '  http-response set-header X-Eas-Backend %s',
    ...ports.map((port, index) => `  server eas-${'ab'[index]} 127.0.0.1:${port} check inter 1s`),
    '',
  ].join('\n');
}

async function bothReachable(client: Client, proxy: { output(): string }): Promise<void> {
  // Up when both servers have passed a health check: two answers from two processes.
  const deadline = Date.now() + 30_000;
  for (const seen = new Set<string>(); seen.size < 2;) {
    if (Date.now() > deadline) throw new Error(`HAProxy does not reach both servers:\n${proxy.output()}`);
    const answer = await client.request('GET', HEALTH_PATH).catch(() => undefined);
    if (answer?.status === 200) seen.add(answer.server);
    else await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '20' },
      'database-url': { type: 'string' },
    },
  });
  const requests = Number(values.requests);
  if (!Number.isInteger(requests) || requests < 2)
    throw new Error('--requests must be an integer of 2 or more');
  const databaseUrl =
    values['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const haproxy = haproxyBinary();
  // What `npm install` builds; incremental, so seconds when dist/ is current.
  log('npm run build');
  await run('npm', ['run', 'build'], { cwd: rootDir });

  const schema = `eas_scaleout_${randomBytes(4).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'eas-scaleout-'));
  const started = performance.now();
  try {
    const ports = await startServers(databaseUrl, schema);
    const frontPort = await freePort();
    const config = join(workDir, 'haproxy.cfg');
    await writeFile(config, haproxyConfig(frontPort, ports));
    log(`starting HAProxy on 127.0.0.1:${frontPort}, round-robin over ${ports.join(', ')}`);
    // HAProxy says nothing when it is up: the loop below waits for it.
    const proxy = await startChild('haproxy', haproxy, ['-f', config, '-db'], process.env, 'at once');
    const client = new Client(`http://127.0.0.1:${frontPort}`);
    await bothReachable(client, proxy);

    const checks = await scenario(client, requests);
    const lines = checks.map(
      (check) =>
        `  PASS  ${check.step.padEnd(34)} ${String(check.requests).padStart(4)} requests  ` +
        `${Object.entries(check.servers)
          .map(([server, count]) => `${server} ${count}`)
          .join(', ')}  (both seen after ${check.propagationMs} ms, ${check.stale} stale)`,
    );
    process.stdout.write(
      `\nscaleout PASS: two processes on one PostgreSQL schema behind HAProxy, ${checks.length} checks in ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s\n${lines.join('\n')}\n`,
    );
    return 0;
  } finally {
    for (const child of spawned.reverse()) await stopChild(child).catch(() => undefined);
    await rm(workDir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`drop schema if exists "${schema}" cascade`).finally(() => admin.end());
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`scaleout FAIL: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
