/** Length of the window sign-in starts are counted in. */
const WINDOW_MS = 60_000;
/** Addresses counted at once; past it, windows that ended are dropped (a flood from many addresses). */
const MAX_ADDRESSES = 10_000;

interface Window {
  start: number;
  count: number;
}

/**
 * How many sign-ins one client address may start per minute on this process (docs/federated-login.md, "Bounds on
 * sign-in starts"): a start is public and costs a redirect's cryptography and, for SAML, a stored request row, so
 * a loop from one address must not turn into thousands of them. Counted per process, in memory: it bounds the work
 * a process does; the rows every process shares are bounded in the database (SamlService). A fixed window of a
 * minute, two numbers per address, touched only by sign-in starts.
 */
export class SignInStarts {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a start from `address`: undefined when admitted, else the seconds until the next one is. */
  admit(address: string): number | undefined {
    const now = this.now();
    let window = this.windows.get(address);
    if (window === undefined || now - window.start >= WINDOW_MS) {
      if (window === undefined && this.windows.size >= MAX_ADDRESSES) this.dropEnded(now);
      window = { start: now, count: 0 };
      this.windows.set(address, window);
    }
    if (window.count >= this.perMinute)
      return Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000));
    window.count += 1;
    return undefined;
  }

  private dropEnded(now: number): void {
    for (const [address, window] of this.windows) {
      if (now - window.start >= WINDOW_MS) this.windows.delete(address);
    }
    // Still full: every address started within the minute. Counting starts afresh keeps the map bounded; the rows
    // stay bounded by the database's own caps.
    if (this.windows.size >= MAX_ADDRESSES) this.windows.clear();
  }
}
