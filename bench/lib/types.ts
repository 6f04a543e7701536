/** A server child: a script in bench/servers/ and its environment (on top of the runner's). */
export interface ServerSpec {
  /** File name in bench/servers/, e.g. `eas.ts`. */
  script: string;
  env: Record<string, string>;
  /**
   * Processes of this server on the same database (default 1); the load is split evenly over them, as a
   * round-robin balancer would (the `scale` section).
   */
  replicas?: number;
  /** Another checkout of the project whose compiled servers run instead of this one's (the `release` section). */
  tree?: string;
}

/** One side of a comparison: a server and the request the load generator repeats against it. */
export interface Scenario {
  /** Short name for the table, e.g. `eas` or `bare fastify+pg`. */
  label: string;
  server: ServerSpec;
  /** Path and query string, exactly as sent. */
  path: string;
  /** Default GET. */
  method?: 'GET' | 'POST';
  /** The body of each request, made anew every time (so that every create has a key of its own). */
  body?: () => string;
  /**
   * Request headers, or how to get them from the running server once before the load (a login whose session
   * cookie the load then sends, as a client with a cookie jar would).
   */
  headers?: Record<string, string> | ((baseUrl: string) => Promise<Record<string, string>>);
  /**
   * Checks one answer before the load starts and throws when it is wrong, so that a scenario answering errors
   * fast is never mistaken for a fast scenario. Returns what `Pair.sameAnswer` compares (for example the keys).
   */
  check(status: number, body: string): unknown;
}

/** The service's scenario against its baseline; passes when subject req/s ÷ baseline req/s ≥ target. */
export interface Pair {
  name: string;
  /** What the pair measures, for the JSON results. */
  description: string;
  subject: Scenario;
  baseline: Scenario;
  /** The issue's target ratio; absent for a pair measured only for comparison (verdict INFO). */
  target?: number;
  /** Whether both checks' results describe the same answer (both must do the same work); throws when not. */
  sameAnswer?(subject: unknown, baseline: unknown): void;
}

/** Where a service under test keeps its data (`--storage`; the sections that need a big database use PostgreSQL). */
export type StorageKind = 'postgres' | 'pglite';

export interface SectionContext {
  databaseUrl: string;
  /** `--storage`: the property-call sections run their service on this; the others always on PostgreSQL. */
  storage: StorageKind;
  /** `--reload`: rebuild fixtures even when an earlier run left them in place. */
  reload: boolean;
  log(message: string): void;
}

/** A named group of pairs (`npm run bench -- <name>`), registered in bench/sections/index.ts. */
export interface Section {
  name: string;
  /** The issue whose acceptance criterion the section checks. */
  issue: number;
  summary: string;
  /** Builds the fixtures the section needs (idempotent, reused across runs) and returns its pairs. */
  prepare(context: SectionContext): Promise<Pair[]>;
}

/** Load-generator settings, the same for every scenario of a run. */
export interface LoadSettings {
  /** Measured seconds per scenario, split evenly over the rounds. */
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  /** Slices per scenario; a pair alternates between its scenarios slice by slice (ABBA order). */
  rounds: number;
}

export interface Measurement {
  label: string;
  /** Completed 2xx responses in the measured window. */
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /**
   * CPU time of the server process per request, in microseconds: what the request costs the server itself, apart
   * from the database and the load generator that share the machine (and apart from waiting for a core).
   */
  serverCpuMicrosecondsPerRequest: number;
  /** Server CPU time over wall time in the measured window (1 = one core busy throughout). */
  serverCpuLoad: number;
  /**
   * How often the load generator went to sleep waiting for an answer, per request (its voluntary context switches):
   * near 0 when the server keeps ahead of it, near 1 when every answer has to wake it (bench/README.md, "Client
   * wakeups").
   */
  clientWakeupsPerRequest: number;
  /** Each measured slice on its own, in the order taken: how much the machine moved during the run. */
  slices: {
    requestsPerSecond: number;
    serverCpuMicrosecondsPerRequest: number;
    clientWakeupsPerRequest: number;
    /** CPU time of the load generator (this process) per request. */
    clientCpuMicrosecondsPerRequest: number;
  }[];
  /** Connection errors and timeouts, and non-2xx answers; either makes the pair an error. */
  errors: number;
  non2xx: number;
}
