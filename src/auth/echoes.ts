/**
 * Waits for this process's own change notification to come back from the database. PostgreSQL sends a notification
 * to every listening connection at once when the transaction commits, so when a process hears its own, the others
 * have been sent theirs: answering only then makes "ended here" mean "refused everywhere" for the client's next
 * request, wherever it goes. A listener that never answers costs a bounded wait, not a hang.
 */
export class Echoes {
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly timeoutMs = 2000) {}

  /** Call before the notifying transaction commits, then await the promise after it did. */
  expect(payload: string): { heard: Promise<void>; cancel: () => void } {
    let done: () => void = () => undefined;
    const heard = new Promise<void>((resolve) => {
      const timer = setTimeout(finish, this.timeoutMs);
      timer.unref();
      function finish(): void {
        clearTimeout(timer);
        resolve();
      }
      done = finish;
    });
    const waiters = this.waiting.get(payload) ?? [];
    waiters.push(done);
    this.waiting.set(payload, waiters);
    const cancel = () => {
      const remaining = (this.waiting.get(payload) ?? []).filter((waiter) => waiter !== done);
      if (remaining.length === 0) this.waiting.delete(payload);
      else this.waiting.set(payload, remaining);
      done();
    };
    return { heard: heard.finally(cancel), cancel };
  }

  /** A notification arrived from the database. */
  hear(payload: string): void {
    const waiters = this.waiting.get(payload);
    if (!waiters) return;
    this.waiting.delete(payload);
    for (const waiter of waiters) waiter();
  }
}
