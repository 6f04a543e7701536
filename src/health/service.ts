import { sql } from 'kysely';
import { appliedEverywhere, type Storage } from '../db/database.js';

/** One check of readiness, as MicroProfile Health names them (docs/operations.md, "Health checks"). */
export interface HealthCheck {
  name: 'database' | 'migrations';
  status: 'UP' | 'DOWN';
}

export interface Readiness {
  status: 'UP' | 'DOWN';
  checks: HealthCheck[];
}

/**
 * Readiness of this process for traffic: the database answers, and its schema has every migration this build knows
 * (a process started against a schema an older build is still migrating must not take requests yet). Liveness needs
 * no check: a process that answers is alive.
 */
export class HealthService {
  constructor(private readonly storage: Storage) {}

  async readiness(): Promise<Readiness> {
    const checks: HealthCheck[] = [];
    let reachable = true;
    try {
      await sql`select 1`.execute(this.storage.db);
    } catch {
      reachable = false;
    }
    checks.push({ name: 'database', status: reachable ? 'UP' : 'DOWN' });
    let current = false;
    if (reachable) {
      try {
        current = await appliedEverywhere(this.storage);
      } catch {
        current = false;
      }
    }
    checks.push({ name: 'migrations', status: current ? 'UP' : 'DOWN' });
    return { status: reachable && current ? 'UP' : 'DOWN', checks };
  }
}
