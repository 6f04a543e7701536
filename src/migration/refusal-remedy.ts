import type { MaximoError } from '../errors.js';
import { baseObjectStructures } from '../metadata/object-structures.js';
import type { ObjectStructure, StructureNode } from '../metadata/registry.js';
import type { ChildDef } from '../metadata/types.js';

/** Where a refused record of a package is fixed when nothing on this deployment is missing: on the source. */
export const FIX_ON_SOURCE = 'Fix the data and recreate the package.';

/**
 * Where to fix a record a deploy refuses (docs/migration.md, "Setting up a target"). A record that names what this
 * deployment lacks (a site, an organization, a location, a value of a value list) is right as it is: the fix is on
 * the target, or in the package, which can carry the missing record ahead of the records that name it. Any other
 * refusal is a fault of the record itself, fixed on the source.
 */
export function refusalRemedy(structure: ObjectStructure, refused: MaximoError): string {
  const { attrName, attrValue, objPath } = refused.detail;
  const value = attrValue === undefined || attrValue === null ? '' : String(attrValue);
  if (refused.reasonCode === 'BMXAA4153E') return createHere('site', value, 'SITE');
  const attribute =
    attrName === undefined ? undefined : nodeOf(structure.root, objPath)?.object.attributes.get(attrName);
  if (refused.reasonCode === 'BMXAA2661E' && attribute?.references) {
    return createHere(attribute.title.toLowerCase(), value, attribute.references.object);
  }
  if (refused.reasonCode === 'BMXAA4190E' && attribute?.domainId) {
    return (
      `Add the value ${value} to the domain ${attribute.domainId} on this deployment (object structure ` +
      `MXAPIDOMAIN), or add the domain to the package ahead of the records that use it, then deploy the package again.`
    );
  }
  return FIX_ON_SOURCE;
}

function createHere(what: string, value: string, objectName: string): string {
  const structure = structureOf(objectName);
  let through = structure === undefined ? '' : ` (object structure ${structure})`;
  // A site names its organization: on an empty deployment that is missing too, and is created first.
  if (objectName === 'SITE')
    through = ` (object structure ${structure}, its organization first through MXAPIORGANIZATION)`;
  return (
    `The ${what} ${value} does not exist on this deployment: create it here${through}, ` +
    `or add it to the package ahead of the records that name it, then deploy the package again.`
  );
}

/**
 * The object structure that writes the object: one rooted at it, else one holding it as a child
 * (`MXAPIPERUSER, child maxuser`).
 */
function structureOf(objectName: string): string | undefined {
  const root = baseObjectStructures.find((def) => def.root === objectName);
  if (root) return root.name;
  for (const def of baseObjectStructures) {
    const child = childNamed(def.children ?? [], objectName);
    if (child) return `${def.name}, child ${child}`;
  }
  return undefined;
}

function childNamed(children: readonly ChildDef[], objectName: string): string | undefined {
  for (const child of children) {
    if (child.object === objectName) return child.name;
    const below = childNamed(child.children ?? [], objectName);
    if (below) return `${child.name}.${below}`;
  }
  return undefined;
}

/** The node of the structure whose object is `objPath` (lower case), the root when none is named. */
function nodeOf(node: StructureNode, objPath: string | undefined): StructureNode | undefined {
  if (objPath === undefined || node.object.name.toLowerCase() === objPath) return node;
  for (const child of node.children) {
    const found = nodeOf(child, objPath);
    if (found) return found;
  }
  return undefined;
}
