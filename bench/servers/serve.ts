import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { FastifyInstance } from 'fastify';

/** What a server child tells the runner over the IPC channel. */
export type ChildMessage =
  | { kind: 'listening'; port: number }
  | { kind: 'profile-started' }
  | { kind: 'profile-written'; file: string }
  | { kind: 'cpu-usage'; microseconds: number };

/**
 * What the runner asks of a server child: the CPU time it has used so far (user + system, to put a CPU cost on each
 * request), and a CPU profile of exactly the measured window (`--profile`).
 */
export type RunnerMessage =
  { kind: 'profile-start' } | { kind: 'profile-stop'; file: string } | { kind: 'cpu-usage' };

/**
 * Child side of the runner's protocol: listen on 127.0.0.1 on a free port, report the port, and stop cleanly on
 * SIGTERM, SIGINT or when the runner goes away (a closed IPC channel), so that `--cpu-prof` profiles get written.
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
  process.on('disconnect', () => void stop());
  process.on('message', (message: RunnerMessage) => {
    if (message.kind === 'cpu-usage') {
      const usage = process.cpuUsage();
      send({ kind: 'cpu-usage', microseconds: usage.user + usage.system });
    } else void profiler(message);
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('The server has no TCP address');
  send({ kind: 'listening', port: address.port });
}

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
