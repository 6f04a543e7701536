import { collectionHref, type Links } from '../../http/links.js';
import type { ObjectStructure, StructureNode } from '../../metadata/registry.js';
import { defaultSearchAttributes } from './plan.js';

/**
 * `GET /oslc/apimeta/<os>`: what a client can ask of an object structure (docs/compatibility.md, "Queries"). Clients read
 * `queryCapability` to find the saved queries; the rest describes the resource so that a form or a search box
 * can be built without reading the service's source.
 */
export function apiMetaJson(
  structure: ObjectStructure,
  links: Links,
  osName: string,
): Record<string, unknown> {
  const collection = collectionHref(links, osName);
  const object = structure.root.object;
  return {
    name: structure.name,
    title: structure.description,
    href: `${links.api}/apimeta/${osName}`,
    resource: collection,
    mainObject: object.name,
    keys: object.keys,
    uniqueId: object.uniqueId,
    // "All" first, as the deployed systems list it: the collection without a saved query.
    queryCapability: [
      { ispublic: true, name: 'All', title: `All ${structure.description.toLowerCase()}`, href: collection },
      ...structure.savedQueries.map((query) => ({
        ispublic: true,
        name: query.name,
        title: query.title,
        href: `${collection}?savedQuery=${encodeURIComponent(query.name)}`,
      })),
    ],
    creationFactory: [{ name: `create${structure.name}`, href: collection }],
    searchAttributes: defaultSearchAttributes(object),
    ...nodeJson(structure.root),
  };
}

function nodeJson(node: StructureNode): Record<string, unknown> {
  return {
    attributes: [...node.object.attributes.values()].map((attribute) => ({
      name: attribute.name,
      type: attribute.type,
      title: attribute.title,
      ...(attribute.length !== undefined && { maxLength: attribute.length }),
      ...(attribute.required && { required: true }),
      ...(attribute.generated && { readonly: true }),
      ...(attribute.writeOnly && { writeonly: true }),
      ...(attribute.domainId !== undefined && { domainid: attribute.domainId }),
    })),
    children: node.children.map((child) => ({
      name: child.name,
      object: child.object.name,
      ...nodeJson(child),
    })),
  };
}
