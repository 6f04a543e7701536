import { errors } from '../errors.js';
import type { ObjectMeta, StructureNode } from '../metadata/registry.js';
import type { Row } from './repository.js';
import { decodeChildAnchor } from './rest-id.js';
import { attributeName } from './validation.js';
import { toStored, type StoredValue } from './values.js';

/*
 * The parts of a request body a write reads besides the record's own values: child collections, their entries'
 * `_action`, and the key values that match an entry to a stored child.
 */

export const childNames = (node: StructureNode): ReadonlySet<string> =>
  new Set(node.children.map((child) => child.name));

export function hasChildEntries(body: Record<string, unknown>, name: string): boolean {
  return Object.keys(body).some((key) => attributeName(key) === name);
}

export function childEntries(body: Record<string, unknown>, name: string): Array<Record<string, unknown>> {
  const key = Object.keys(body).find((candidate) => attributeName(candidate) === name);
  const value = key === undefined ? undefined : body[key];
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw errors.badRequest(`Each entry of the child collection ${name} must be a JSON object.`, {
        attrName: name,
      });
    }
    return entry as Record<string, unknown>;
  });
}

export function joinValues(child: StructureNode, parent: Row): Row {
  return Object.fromEntries(
    child.on.map(([parentAttribute, childAttribute]) => [childAttribute, parent[parentAttribute] ?? null]),
  );
}

export function joinPairs(child: StructureNode, parent: Row): Array<readonly [string, StoredValue]> {
  return child.on.map(
    ([parentAttribute, childAttribute]) => [childAttribute, parent[parentAttribute] ?? null] as const,
  );
}

/** `_action` of a child entry: Add, Update (Change), AddChange (the default), Delete; anything else is refused. */
export function childAction(
  entry: Record<string, unknown>,
  object: ObjectMeta,
): 'add' | 'update' | 'addchange' | 'delete' {
  const sent = Object.entries(entry).find(([name]) => name.toLowerCase() === '_action')?.[1];
  if (sent === undefined || sent === null || sent === '') return 'addchange';
  const action = typeof sent === 'string' ? sent.toLowerCase() : '';
  if (action === 'add' || action === 'delete' || action === 'addchange') return action;
  if (action === 'update' || action === 'change') return 'update';
  throw errors.badRequest(
    `The _action ${String(sent)} is not one of Add, Update, Change, AddChange and Delete.`,
    {
      attrName: '_action',
      attrValue: String(sent),
      objPath: object.name.toLowerCase(),
    },
  );
}

/**
 * The key values a body names: inherited from the parent first, then sent; a key attribute that is not sent is
 * null when it may be null (a domain value without site or organization), else `missing` names it.
 */
export function keyValuesOf(
  object: ObjectMeta,
  body: Record<string, unknown>,
  inherited: Row,
): { values: StoredValue[]; missing?: string } {
  const values: StoredValue[] = [];
  let missing: string | undefined;
  for (const key of object.keys) {
    if (key in inherited) {
      values.push(inherited[key] ?? null);
      continue;
    }
    const attribute = object.attributes.get(key);
    const sent = Object.entries(body).find(([name]) => attributeName(name) === key)?.[1];
    if (sent === undefined || sent === null || sent === '' || !attribute) {
      if (attribute?.required) missing ??= key;
      values.push(null);
      continue;
    }
    const converted = toStored(attribute, sent);
    if (!converted.ok) {
      throw errors.wrongType(
        attribute.title,
        String(sent),
        converted.expected,
        key,
        object.name.toLowerCase(),
      );
    }
    values.push(converted.value);
  }
  return missing === undefined ? { values } : { values, missing };
}

export function describeKeys(object: ObjectMeta, values: readonly StoredValue[]): string {
  return object.keys
    .map((key, index) => `${key}=${values[index] === null ? 'null' : String(values[index])}`)
    .join(', ');
}

const sameKey = (stored: StoredValue | undefined, sent: StoredValue | undefined): boolean =>
  (stored ?? null) === null || (sent ?? null) === null
    ? (stored ?? null) === (sent ?? null)
    : String(stored instanceof Date ? stored.toISOString() : stored) ===
      String(sent instanceof Date ? sent.toISOString() : sent);

/**
 * The stored child a sent entry addresses: by its `localref` unique id, by its anchored `href`
 * (`http://childkey#...`), else by its key values.
 */
export function findChild(
  object: ObjectMeta,
  existing: readonly Row[],
  entry: Record<string, unknown>,
  inherited: Row,
): { match: Row | undefined; missing?: string; keys?: StoredValue[] } {
  const localref = typeof entry.localref === 'string' ? /\/\d+-(\d+)$/.exec(entry.localref) : null;
  if (localref) return { match: existing.find((row) => String(row[object.uniqueId]) === localref[1]) };
  const anchor =
    typeof entry.href === 'string' ? decodeChildAnchor(entry.href, object.keys.length + 2) : undefined;
  if (anchor) {
    const keys = anchor.slice(2);
    return {
      match: existing.find((row) => object.keys.every((key, index) => sameKey(row[key], keys[index]))),
      keys,
    };
  }
  const { values, missing } = keyValuesOf(object, entry, inherited);
  if (missing !== undefined) return { match: undefined, missing };
  return {
    match: existing.find((row) => object.keys.every((key, index) => sameKey(row[key], values[index]))),
    keys: values,
  };
}
