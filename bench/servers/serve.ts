import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { FastifyInstance } from 'fastify';

/** What a server child tells the runner over the IPC channel. */
export type ChildMessage =
  | { kind: 'listening'; port: number }
  | { kind: 'profile-started' }
  | { kind: 'profile-written'; file: string };

/** What the runner asks of a profiled server child: a CPU profile of exactly the measured window (`--profile`). */
export type RunnerMessage =
  | {
      kind: 'profile-start';
      /** V8's sampling interval; its default (1 ms) when absent. */ intervalMicroseconds?: number;
    }
  | { kind: 'profile-stop'; file: string };

/**
 * Child side of the runner's protocol: listen on 127.0.0.1 on a free port, report the port, and stop cleanly on
 * SIGTERM or SIGINT. A measured child has no IPC channel (a plain process, as in production): it reports the port
 * on stdout and the runner reads its CPU time from /proc. Only a profiled child (`--profile`) is given the channel,
 * to start and stop V8's profiler around the measured window; it also stops when the runner goes away.
 */
export async function serveForBenchmark(app: FastifyInstance, close: () => Promise<void>): Promise<void> {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await app.close();
      await close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  const ipc = process.send !== undefined;
  if (ipc) {
    process.on('disconnect', () => void stop());
    process.on('message', (message: RunnerMessage) => void profiler(message));
  }

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('The server has no TCP address');
  if (ipc) send({ kind: 'listening', port: address.port });
  else process.stdout.write(`${LISTENING_PREFIX}${address.port}\n`);
}

/** The line a child without IPC channel writes once it listens, followed by the port. */
export const LISTENING_PREFIX = 'bench-server listening on port ';

function send(message: ChildMessage): void {
  if (!process.send) throw new Error('Run this server from bench/run.ts (it needs the IPC channel)');
  process.send(message);
}

let session: Session | undefined;

/** V8's sampling profiler through the inspector, so start-up and warm-up stay out of the profile. */
async function profiler(message: RunnerMessage): Promise<void> {
  if (message.kind === 'profile-start') {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    if (message.intervalMicroseconds !== undefined)
      await session.post('Profiler.setSamplingInterval', { interval: message.intervalMicroseconds });
    await session.post('Profiler.start');
    send({ kind: 'profile-started' });
  } else if (message.kind === 'profile-stop' && session) {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    session = undefined;
    await writeFile(message.file, JSON.stringify(profile));
    send({ kind: 'profile-written', file: message.file });
  }
}

/** A required variable of the child's environment, set by the section that starts it. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}
