import type { ObjectStructure } from '../metadata/registry.js';

/** Root objects every site-level record names, in the order they depend on each other. */
const SETUP_OBJECTS: readonly string[] = ['ORGANIZATION', 'SITE'];

/**
 * A definition's content in the order a package carries and deploys it: organizations, then sites, then the rest in
 * their `cfgdataorder` (docs/migration.md, "Setting up a target"). A deploy writes in this order, and a site's
 * records are validated against the sites the deploy has already written.
 */
export function setupFirst<T extends { objectstructure: string }>(
  content: readonly T[],
  findObjectStructure: (name: string) => ObjectStructure | undefined,
): T[] {
  const rank = (entry: T): number => {
    const root = findObjectStructure(entry.objectstructure)?.root.object.name;
    const index = root === undefined ? -1 : SETUP_OBJECTS.indexOf(root);
    return index === -1 ? SETUP_OBJECTS.length : index;
  };
  // Array.prototype.sort is stable: the rest keep their order.
  return content
    .map((entry) => ({ entry, rank: rank(entry) }))
    .sort((left, right) => left.rank - right.rank)
    .map(({ entry }) => entry);
}
