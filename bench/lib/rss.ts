import { readFile } from 'node:fs/promises';

/** A line of `/proc/<pid>/status` in bytes: `VmRSS` (resident now) or `VmHWM` (the peak so far); 0 once it ended. */
export async function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
  return Number(kb ?? 0) * 1024;
}

/** A process's resident set (VmRSS) now, in bytes. */
export function rssOf(pid: number): Promise<number> {
  return memoryOf(pid, 'VmRSS');
}

/** The first child of a process (Linux: /proc/<pid>/task/<pid>/children), or undefined while it has none. */
async function firstChildOf(pid: number): Promise<number | undefined> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const first = children.trim().split(' ')[0];
  return first ? Number(first) : undefined;
}

/**
 * Samples a process's `field` every `intervalMs` (default VmRSS, 20 ms), or its first child's (a command run by a
 * shell); `stop` answers the peak in bytes.
 */
export function sampleMemory(
  pid: number,
  field: 'VmRSS' | 'VmHWM' = 'VmRSS',
  intervalMs = 20,
  ofChild = false,
): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const sampled = ofChild ? await firstChildOf(pid) : pid;
      if (sampled !== undefined) peak = Math.max(peak, await memoryOf(sampled, field));
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}
