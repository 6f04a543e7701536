import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { errors, isMaximoError } from '../errors.js';
import type { ObjectStructure } from '../metadata/registry.js';
import type { MemberRecord } from '../oslc/query/index.js';
import {
  COMMON,
  type PropertyService,
  type PropertySets,
  type SetPropertyInput,
} from '../properties/service.js';

/**
 * System properties in packages (docs/migration.md, "System properties"): records of MXAPIPROPERTY, a property
 * with its values per server name. They are exported like any structure's records, but deployed through the
 * property service's own rules (`PropertySets`), never written as rows.
 */
export const PROPERTY_STRUCTURE = 'MXAPIPROPERTY';

export const isPropertyStructure = (structure: ObjectStructure): boolean =>
  structure.name === PROPERTY_STRUCTURE;

/**
 * Whether a member travels in a package: an encrypted property never does, so that no package file holds a secret
 * (its values are set on each deployment with setProperty).
 */
export function carried(structure: ObjectStructure, member: MemberRecord): boolean {
  return !isPropertyStructure(structure) || member.values.encrypted !== true;
}

/** The values one property record carries, as setProperty takes them. */
function carriedValues(record: Record<string, unknown>): SetPropertyInput[] {
  const propName = typeof record.propname === 'string' ? record.propname : '';
  const values = Array.isArray(record.maxpropvalue) ? (record.maxpropvalue as unknown[]) : [];
  return values.map((entry) => {
    const value = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const sent = value.propvalue;
    return {
      propName,
      serverName: typeof value.servername === 'string' ? value.servername : COMMON,
      propValue:
        typeof sent === 'string' || typeof sent === 'number' || typeof sent === 'boolean' ? sent : null,
    };
  });
}

const keyOf = (input: SetPropertyInput) =>
  `propname=${input.propName}, servername=${input.serverName ?? COMMON}`;

/**
 * Sets the values one property record carries; counted as a change, as a record matched by its keys is. A refusal
 * names the property and the server name.
 */
export async function deployProperty(
  sets: PropertySets,
  transaction: Kysely<Database>,
  record: Record<string, unknown>,
): Promise<'changed'> {
  for (const input of carriedValues(record)) {
    try {
      await sets.set(transaction, input);
    } catch (error) {
      if (!isMaximoError(error)) throw error;
      throw errors.packageRecordRefused(
        PROPERTY_STRUCTURE,
        keyOf(input),
        error.message,
        error.detail.attrName,
      );
    }
  }
  return 'changed';
}

/** What a deploy of one property record would change: each carried value that differs from the stored one. */
export async function previewProperty(
  properties: PropertyService,
  record: Record<string, unknown>,
): Promise<Array<{ key: string; attributes: Record<string, { from: unknown; to: unknown }> }>> {
  const inputs = carriedValues(record);
  if (inputs.length === 0) return [];
  const [description] = await properties.describe([inputs[0]!.propName]);
  const changes = [];
  for (const input of inputs) {
    const from =
      description?.maxpropvalue.find((value) => value.servername === input.serverName)?.propvalue ?? null;
    const to = input.propValue === null || input.propValue === undefined ? null : String(input.propValue);
    if (from !== to) changes.push({ key: keyOf(input), attributes: { propvalue: { from, to } } });
  }
  return changes;
}
