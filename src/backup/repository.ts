import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/** The schema's migrations: the last one applied (names sort in order) and how many are. */
export async function appliedMigrations<DB>(db: Kysely<DB>): Promise<{ last: string; count: number }> {
  const { rows } = await sql<{ last: string | null; count: number }>`
    select max(name) as last, count(*)::int as count from kysely_migration`.execute(db);
  return { last: rows[0]?.last ?? '', count: rows[0]?.count ?? 0 };
}

/**
 * A new identity for a restored copy that must not be taken for its original (docs/operations.md, "Backup and
 * restore"); the label says where it came from. Answers the new id.
 */
export async function replaceDeploymentIdentity<DB>(db: Kysely<DB>, label: string): Promise<string> {
  const id = randomUUID();
  await sql`
    update deploymentidentity set deploymentid = ${id}::uuid, label = ${label}, createdate = current_timestamp`.execute(
    db,
  );
  return id;
}
