import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, RunnerMessage } from '../servers/serve.js';
import type { ServerSpec } from './types.js';

const serversDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'servers');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

export interface RunningServer {
  baseUrl: string;
  pid: number;
  /** CPU time (user + system) the child has used since it started, in microseconds. */
  cpuMicroseconds(): Promise<number>;
  /** Starts the child's CPU profiler (see serve.ts). */
  startProfile(): Promise<void>;
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
 * Starts a server from bench/servers/ in its own Node process, so that it never shares an event loop (or a core
 * it could otherwise have) with the load generator, and resolves once it listens on 127.0.0.1.
 */
export async function startServer(spec: ServerSpec): Promise<RunningServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(serversDir, spec.script)], {
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));

  const port = await nextMessage(child, 'listening', `${spec.script} start`, START_TIMEOUT_MS)
    .then((message) => message.port)
    .catch(async (error: unknown) => {
      await stopChild(child);
      throw error;
    });

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    async cpuMicroseconds() {
      const answer = nextMessage(child, 'cpu-usage', `${spec.script} CPU usage`, STOP_TIMEOUT_MS);
      child.send({ kind: 'cpu-usage' } satisfies RunnerMessage);
      return (await answer).microseconds;
    },
    async startProfile() {
      const started = nextMessage(child, 'profile-started', `${spec.script} profiler`, STOP_TIMEOUT_MS);
      child.send({ kind: 'profile-start' } satisfies RunnerMessage);
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
async function stopChild(child: ChildProcess): Promise<void> {
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
