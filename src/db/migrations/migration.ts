/**
 * One versioned schema change: statements run in order, in one transaction. Declared apart from the list
 * (`index.ts`) so that a migration file imports only this leaf, never the list that imports it.
 */
export interface Migration {
  name: string;
  statements: readonly string[];
}
