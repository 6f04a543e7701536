import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LISTENING_PREFIX, type ChildMessage, type RunnerMessage } from '../servers/serve.js';
import { compiledServersDirOf } from './compile.js';
import type { ServerSpec } from './types.js';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

export interface RunningServer {
  baseUrl: string;
  pid: number;
  /** CPU time (user + system) the child has used since it started, in microseconds. */
  cpuMicroseconds(): Promise<number>;
  /** Starts the child's CPU profiler (see serve.ts); only for a child started with `profile`. */
  startProfile(intervalMicroseconds?: number): Promise<void>;
  /** Stops it and has the child write the `.cpuprofile` to `file`. */
  stopProfile(file: string): Promise<void>;
  stop(): Promise<void>;
}

/** Children still running, stopped on the runner's way out whatever the reason. */
const running = new Set<ChildProcess>();

process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function isChildMessage(message: unknown): message is ChildMessage {
  return (
    typeof message === 'object' && message !== null && typeof (message as ChildMessage).kind === 'string'
  );
}

/** The child's next message of one kind (or a failure when it exits or does not answer in time). */
function nextMessage<K extends ChildMessage['kind']>(
  child: ChildProcess,
  kind: K,
  what: string,
  timeoutMs: number,
): Promise<Extract<ChildMessage, { kind: K }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${what}: no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const onMessage = (message: unknown) => {
      if (!isChildMessage(message) || message.kind !== kind) return;
      cleanup();
      resolve(message as Extract<ChildMessage, { kind: K }>);
    };
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`${what}: the server exited (code ${code}, signal ${signal})`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/**
 * The port a child without IPC channel writes on stdout once it listens. Every other line of its stdout (the
 * service's log) goes on to the runner's stderr, and the pipe is read to the end so the child never blocks on it.
 */
function listeningPort(child: ChildProcess, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${what}: not listening within ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (line.startsWith(LISTENING_PREFIX)) {
        cleanup();
        resolve(Number(line.slice(LISTENING_PREFIX.length)));
      } else process.stderr.write(`${line}\n`);
    });
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`${what}: the server exited (code ${code}, signal ${signal})`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('exit', onExit);
    };
    child.on('exit', onExit);
  });
}

let ticksPerSecond: number | undefined;

/**
 * CPU time of a process from /proc/<pid>/stat (utime + stime, in clock ticks), read from outside so that the
 * measured process needs no channel to the runner. Linux only, like the rest of the benchmark's process handling.
 */
export async function processCpuMicroseconds(pid: number): Promise<number> {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: the fields after it are counted from ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / ticksPerSecond) * 1e6;
}

export interface StartOptions {
  /** Give the child the IPC channel that starts and stops its profiler (`--profile`). */
  profile: boolean;
}

/**
 * Starts a compiled server from bench/servers/ (see compile.ts) under plain `node`, in its own process so that it
 * never shares an event loop with the load generator, and resolves once it listens on 127.0.0.1.
 */
export async function startServer(spec: ServerSpec, options: StartOptions): Promise<RunningServer> {
  const script = join(compiledServersDirOf(spec.tree), spec.script.replace(/\.ts$/, '.js'));
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...spec.env },
    stdio: options.profile ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));

  const listening = options.profile
    ? nextMessage(child, 'listening', `${spec.script} start`, START_TIMEOUT_MS).then(
        (message) => message.port,
      )
    : listeningPort(child, `${spec.script} start`);
  const port = await listening.catch(async (error: unknown) => {
    await stopChild(child);
    throw error;
  });
  const pid = child.pid ?? -1;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid,
    cpuMicroseconds: () => processCpuMicroseconds(pid),
    async startProfile(intervalMicroseconds) {
      const started = nextMessage(child, 'profile-started', `${spec.script} profiler`, STOP_TIMEOUT_MS);
      child.send({
        kind: 'profile-start',
        ...(intervalMicroseconds !== undefined && { intervalMicroseconds }),
      } satisfies RunnerMessage);
      await started;
    },
    async stopProfile(file) {
      const written = nextMessage(child, 'profile-written', `${spec.script} profiler`, 60_000);
      child.send({ kind: 'profile-stop', file } satisfies RunnerMessage);
      await written;
    },
    stop: () => stopChild(child),
  };
}

/** SIGTERM (the child closes its server and its pool), SIGKILL if it hangs. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}
