import { setImmediate } from 'node:timers/promises';

/**
 * Longest stretch of work (milliseconds) a long job runs before it gives the event loop a turn. The embedded
 * database (PGlite) runs on the event loop's thread and its statements resolve without a turn, so a long job on it
 * (a deploy of tens of thousands of records) would otherwise leave every other request of the process unanswered
 * until it ends (docs/migration.md, "Progress").
 */
const STRETCH_MS = 50;

let lastTurn = performance.now();

/** Gives the event loop a turn when the work since the last one (of any caller) has run STRETCH_MS or more. */
export async function giveTurnWhenDue(): Promise<void> {
  if (performance.now() - lastTurn < STRETCH_MS) return;
  await setImmediate();
  lastTurn = performance.now();
}
