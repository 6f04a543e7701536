/**
 * How a migration may overlap with processes of the release before it (src/db/README.md, "Phases"):
 * - `expand` only adds (tables, columns, indexes, rows): the release before it keeps working on the schema, so the
 *   first process of the new release applies it while older ones still serve.
 * - `contract` removes or rewrites what only earlier releases use: the new release serves without it, so it waits
 *   until no process of an earlier release remains, and the next process of this release to start applies it.
 * - `offline` rewrites what both releases use: it cannot overlap with an earlier release, so every older process
 *   must stop before a process of this release starts (no rolling upgrade across it).
 */
export type MigrationPhase = 'expand' | 'contract' | 'offline';

/**
 * One versioned schema change: statements run in order, in one transaction. Declared apart from the list
 * (`index.ts`) so that a migration file imports only this leaf, never the list that imports it.
 */
export interface Migration {
  name: string;
  phase: MigrationPhase;
  statements: readonly string[];
}
