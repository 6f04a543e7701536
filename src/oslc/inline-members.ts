import type { ObjectStructure } from '../metadata/registry.js';
import type { SelectClause, SelectItem } from './query/index.js';
import type { Row } from './repository.js';

/*
 * Members of a record's JSON that a module reads for a page of records at once, when `oslc.select` names them
 * (attachments: `doclinks{*}`, src/attachments): neither attributes nor child collections of the object structure,
 * so the query engine passes over their names and the answer adds them once the records are read.
 */

/** A record the answer carries: its unique id and its address. */
export interface InlineOwner {
  uniqueId: number;
  href: string;
}

export interface InlineMemberContext {
  /** The records' business object (upper case). */
  object: string;
  owners: readonly InlineOwner[];
  /** `*`, or the names the select lists inside the member's braces (lower case). */
  names: '*' | readonly string[];
  lean: boolean;
}

/** The member's value of each record that has one, by unique id. */
export type InlineMemberReader = (context: InlineMemberContext) => Promise<Map<number, unknown>>;

/** What the select asks of a registered member, or undefined when it does not name it. */
function asked(items: readonly SelectItem[], name: string): '*' | string[] | undefined {
  for (const item of items) {
    if (item.kind !== 'child' && item.kind !== 'attribute') continue;
    if (item.name.toLowerCase().replace(/^spi:/, '') !== name) continue;
    if (item.kind === 'attribute' || item.items.some((inner) => inner.kind === 'all')) return '*';
    return item.items.flatMap((inner) =>
      inner.kind === 'attribute' ? [inner.name.toLowerCase().replace(/^[a-z_]+:/, '')] : [],
    );
  }
  return undefined;
}

/**
 * Adds to each record's JSON the registered members the select names, each read once for the whole answer. A name
 * that is a child collection of the structure stays the child collection's.
 */
export async function addInlineMembers(
  readers: ReadonlyMap<string, InlineMemberReader> | undefined,
  structure: ObjectStructure,
  select: SelectClause | undefined,
  records: ReadonlyArray<{ values: Readonly<Row>; json: Record<string, unknown> }>,
  lean: boolean,
): Promise<void> {
  if (!readers || !select || records.length === 0) return;
  const root = structure.root;
  for (const [name, reader] of readers) {
    if (root.children.some((child) => child.name === name)) continue;
    const names = asked(select.items, name);
    if (names === undefined) continue;
    const owners = records.map(({ values, json }) => ({
      uniqueId: Number(values[root.object.uniqueId]),
      href: String(json[lean ? 'href' : 'rdf:about']),
    }));
    const found = await reader({ object: root.object.name, owners, names, lean });
    for (const [index, { json }] of records.entries()) {
      const value = found.get(owners[index]!.uniqueId);
      if (value !== undefined) json[lean ? name : `spi:${name}`] = value;
    }
  }
}
