import type { PropertyService } from '../properties/service.js';

/** A server process as the property registry knows it: by its server name (EAS_SERVER_NAME). */
export interface ServerProcess {
  servername: string;
  /** This process answered the request. */
  thisserver: boolean;
  /** Properties whose value it applied (its acknowledgements, `maxpropapplied`). */
  applied: number;
  /** Properties whose stored value it has not applied yet (no live refresh: waits for its restart). */
  pending: number;
  /** Its latest acknowledgement: when it last applied a value. */
  lastappliedat: string | null;
}

/**
 * The server processes that share the database, read from the acknowledgements each writes when it applies a
 * property value (docs/properties.md, "Refresh"): every process records every property at start, so each one that
 * has run is listed. Processes that share a server name are one entry (the name is what values are stored for).
 */
export class ServerProcessService {
  constructor(
    private readonly properties: PropertyService,
    private readonly serverName: string,
  ) {}

  async list(): Promise<ServerProcess[]> {
    const byName = new Map<string, ServerProcess>();
    for (const description of await this.properties.describe()) {
      for (const applied of description.maxpropapplied) {
        const entry = byName.get(applied.servername) ?? {
          servername: applied.servername,
          thisserver: applied.servername === this.serverName,
          applied: 0,
          pending: 0,
          lastappliedat: null,
        };
        entry.applied += 1;
        if (applied.pending) entry.pending += 1;
        if (entry.lastappliedat === null || applied.appliedat > entry.lastappliedat)
          entry.lastappliedat = applied.appliedat;
        byName.set(applied.servername, entry);
      }
    }
    return [...byName.values()].sort((left, right) => left.servername.localeCompare(right.servername));
  }
}
