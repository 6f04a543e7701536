import type { MemberRecord, NodePlan } from './query/index.js';
import {
  attributeShapes,
  collectionJson,
  hasSelection,
  keyPart,
  memberHref,
  type PageInfo,
  type ResponseOptions,
} from './response.js';
import { childAnchor } from './rest-id.js';
import { toJson, type StoredValue } from './values.js';

/*
 * Members written straight to JSON text by a serializer worked out once per selection (a plan node) and form (lean
 * or namespaced): the keys are escaped once, and a page of members builds no object per member only to stringify
 * it. The text is exactly JSON.stringify of what response.ts builds (member-text.test.ts holds them equal); a
 * selection whose object would not stringify as its keys are listed (a key twice, a key that is an array index,
 * dot-notation values nesting objects) is written through response.ts instead.
 */

interface AttributeStep {
  name: string;
  domainId: string | undefined;
  /** `"key":`, escaped once. */
  key: string;
  descriptionKey: string;
  maxvalueKey: string;
}

interface ChildStep {
  jsonName: string;
  key: string;
  node: NodeText;
}

interface NodeText {
  node: NodePlan;
  attributes: readonly AttributeStep[];
  children: readonly ChildStep[];
  /** `"<child>_collectionref":` and the suffix of its value, per child of the structure node. */
  collectionRefs: ReadonlyArray<readonly [string, string]>;
}

const keyText = (key: string): string => `${JSON.stringify(key)}:`;

/** A key JavaScript would move to the front of an object (an array index) or treat as no property at all. */
const movesOrVanishes = (key: string): boolean => /^(0|[1-9]\d*)$/.test(key) || key === '__proto__';

function nodeText(node: NodePlan, lean: boolean): NodeText | undefined {
  if (node.related.length > 0) return undefined;
  const prefix = lean ? '' : 'spi:';
  const shapes = attributeShapes(node, lean);
  const children: ChildStep[] = [];
  for (const child of node.children) {
    const text = nodeText(child.node, lean);
    if (!text) return undefined;
    children.push({ jsonName: child.jsonName, key: keyText(prefix + child.jsonName), node: text });
  }
  const refs = (node.structureNode?.children ?? []).map((child) => `${child.name}_collectionref`);
  // Every key a member of this node may have, whichever options a request brings: each must be there once.
  const keys = [
    ...shapes.flatMap((shape) => [shape.key, shape.descriptionKey, shape.maxvalueKey]),
    '_rowstamp',
    lean ? 'href' : 'rdf:about',
    'localref',
    ...refs,
    ...node.children.map((child) => prefix + child.jsonName),
  ];
  if (new Set(keys).size !== keys.length || keys.some(movesOrVanishes)) return undefined;
  return {
    node,
    attributes: shapes.map((shape) => ({
      name: shape.attribute.name,
      domainId: shape.attribute.domainId,
      key: keyText(shape.key),
      descriptionKey: keyText(shape.descriptionKey),
      maxvalueKey: keyText(shape.maxvalueKey),
    })),
    children,
    collectionRefs: (node.structureNode?.children ?? []).map((child) => [
      keyText(`${child.name}_collectionref`),
      `/${child.name}`,
    ]),
  };
}

const textsByNode = new WeakMap<NodePlan, { lean: NodeText | null; namespaced: NodeText | null }>();

/** The serializer of a node's members in one form, or undefined when they are written through response.ts. */
function serializerOf(node: NodePlan, lean: boolean): NodeText | undefined {
  let texts = textsByNode.get(node);
  if (!texts) {
    texts = { lean: nodeText(node, true) ?? null, namespaced: nodeText(node, false) ?? null };
    textsByNode.set(node, texts);
  }
  return (lean ? texts.lean : texts.namespaced) ?? undefined;
}

/** Whether JSON writes `text` other than as it is: quotes, backslashes, control characters, surrogates. */
function needsEscape(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return true;
  }
  return false;
}

/** A string as JSON text: most values need no escape, and a scan is cheaper than JSON.stringify's set-up. */
const stringText = (text: string): string => (needsEscape(text) ? JSON.stringify(text) : `"${text}"`);

/** A value as JSON writes it (numbers without a JSON form are null, as JSON.stringify writes them). */
function valueText(value: StoredValue): string {
  const json = toJson(value);
  if (typeof json === 'string') return stringText(json);
  if (typeof json === 'number') return Number.isFinite(json) ? String(json) : 'null';
  return String(json);
}

/** The attributes of a member and its `_rowstamp`, each followed by a comma (response.ts, attributesJson). */
function attributesText(text: NodeText, record: MemberRecord, options: ResponseOptions): string {
  const { values } = record;
  const siteid = typeof values.siteid === 'string' ? values.siteid : null;
  const orgid = typeof values.orgid === 'string' ? values.orgid : null;
  let out = '';
  for (const step of text.attributes) {
    const value = values[step.name] ?? null;
    if (value === null && options.dropNulls) continue;
    out += `${step.key}${valueText(value)},`;
    if (step.domainId && value !== null) {
      const domainValue = options.domains.find(step.domainId, value, siteid, orgid);
      if (domainValue?.description) out += `${step.descriptionKey}${stringText(domainValue.description)},`;
      if (options.internalValues && domainValue?.maxvalue)
        out += `${step.maxvalueKey}${stringText(domainValue.maxvalue)},`;
    }
  }
  return `${out}"_rowstamp":${stringText(String(values.rowstamp))},`;
}

/** The child collections of a member, each preceded by a comma (response.ts, childrenJson). */
function childrenText(
  text: NodeText,
  record: MemberRecord,
  parentHref: string,
  options: ResponseOptions,
): string {
  let out = '';
  const aboutKey = options.lean ? '"href":' : '"rdf:about":';
  for (const child of text.children) {
    const rows = record.children.get(child.jsonName) ?? [];
    const parts = rows.map((row, index) => {
      const uniqueId = row.values[row.node.object.uniqueId];
      const localref = `${parentHref}/${child.jsonName}/${index}-${String(uniqueId)}`;
      const anchor = childAnchor([
        record.node.object.name,
        row.node.object.name,
        ...row.node.object.keys.map((key) => keyPart(row.values[key])),
      ]);
      return (
        `{${attributesText(child.node, row, options)}${aboutKey}${stringText(anchor)},` +
        `"localref":${stringText(localref)}${childrenText(child.node, row, localref, options)}}`
      );
    });
    out += `,${child.key}[${parts.join(',')}]`;
  }
  return out;
}

/**
 * One member as JSON text: JSON.stringify(memberJson(record, options)), or undefined when its selection is written
 * through response.ts.
 */
export function memberText(record: MemberRecord, options: ResponseOptions): string | undefined {
  const text = serializerOf(record.node, options.lean);
  if (!text) return undefined;
  const href = memberHref(record, options);
  const hrefText = stringText(href);
  if (!hasSelection(record.node))
    return options.lean ? `{"href":${hrefText}}` : `{"rdf:resource":${hrefText}}`;
  let out = `{${attributesText(text, record, options)}${options.lean ? '"href":' : '"rdf:about":'}${hrefText}`;
  if (options.collectionRefs) {
    for (const [key, suffix] of text.collectionRefs) out += `,${key}${stringText(href + suffix)}`;
  }
  return `${out}${childrenText(text, record, href, options)}}`;
}

/** Member texts of a page, or undefined when any member is written through response.ts. */
export function memberTexts(
  records: readonly MemberRecord[],
  options: ResponseOptions,
): string[] | undefined {
  const texts: string[] = [];
  for (const record of records) {
    const text = memberText(record, options);
    if (text === undefined) return undefined;
    texts.push(text);
  }
  return texts;
}

/** JSON.stringify(collectionJson(members, page, options)) for members already written as text. */
export function collectionText(members: readonly string[], page: PageInfo, options: ResponseOptions): string {
  const empty = JSON.stringify(collectionJson([], page, options));
  const list = `[${members.join(',')}]`;
  // Lean: `member` is the first key. Namespaced: `rdfs:member` follows the response info and precedes only the
  // collection's `rdf:about`; inside a JSON string every quote is escaped, so the key text occurs nowhere else.
  const marker = options.lean ? '{"member":[]' : '"rdfs:member":[]';
  const at = options.lean ? 0 : empty.lastIndexOf(marker);
  const start = at + marker.length - 2;
  return `${empty.slice(0, start)}${list}${empty.slice(start + 2)}`;
}
