import type { DomainSnapshot } from '../domains/domain-cache.js';
import { errors } from '../errors.js';
import type { DefinitionRow, ValueRow } from './repository.js';

/**
 * A property's value: as sent, as checked against its definition, as it applies to a server (docs/properties.md).
 * Pure functions of the definition and the values; the service holds the state and the storage.
 */

/** The server name of values that apply to every server process without a value of its own. */
export const COMMON = 'COMMON';

export type PropertyType = 'ALN' | 'INTEGER' | 'YORN';

/** A value as a client sends it to setProperty. */
export type SentValue = string | number | boolean | null | undefined;

const MAX_ALN_LENGTH = 512;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export function isSecure(definition: DefinitionRow): boolean {
  return definition.masked || definition.encrypted;
}

/** The value as it is at rest (sealed for an encrypted property). */
export function atRest(row: ValueRow): string | null {
  return row.encryptedvalue ?? row.propvalue;
}

/** COMMON is matched in any case; a named server is kept as sent (it must equal the process's EAS_SERVER_NAME). */
export function serverNameOf(serverName: string | undefined): string {
  const name = serverName?.trim() ?? '';
  return name === '' || name.toUpperCase() === COMMON ? COMMON : name;
}

/** The sent value as text; an empty text is no value, as in the deployed systems. */
export function valueOf(value: SentValue): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? '1' : '0';
  const text = String(value);
  return text === '' ? null : text;
}

/**
 * The value that applies to a server: its own, else COMMON's, else the default. A global-only property reads
 * only COMMON, an instance-only one only the server's own.
 */
export function effectiveValue(
  definition: DefinitionRow,
  values: ReadonlyMap<string, string | null>,
  serverName: string,
): string | null {
  if (!definition.globalonly && values.has(serverName)) return values.get(serverName)!;
  if (!definition.instanceonly && values.has(COMMON)) return values.get(COMMON)!;
  return definition.maximodefault;
}

/** Checks a value against the property's flags, type and domain; answers it in its stored form. */
export function validate(
  definition: DefinitionRow,
  serverName: string,
  value: string | null,
  domains: DomainSnapshot,
): string | null {
  const name = definition.propname;
  if (!definition.onlinechanges) throw errors.propertyNotChangeableOnline(name);
  if (definition.globalonly && serverName !== COMMON) throw errors.propertyScope(name, serverName, 'global');
  if (definition.instanceonly && serverName === COMMON)
    throw errors.propertyScope(name, serverName, 'instance');
  if (value === null) {
    if (!definition.nullsallowed) throw errors.propertyValueRequired(name);
    return null;
  }
  const stored = typed(definition, value);
  if (definition.domainid !== null && !domains.find(definition.domainid, stored)) {
    throw errors.propertyValueOutsideDomain(
      name,
      value,
      `it is not in the value list ${definition.domainid}`,
    );
  }
  return stored;
}

export function typed(definition: DefinitionRow, value: string): string {
  const name = definition.propname;
  switch (definition.maxtype as PropertyType) {
    case 'INTEGER': {
      const text = value.trim();
      const number = Number(text);
      if (!/^[+-]?\d+$/.test(text) || number < INT32_MIN || number > INT32_MAX) {
        throw errors.propertyValueNotValid(name, value, 'INTEGER', 'a whole number is expected');
      }
      if (definition.rangemin !== null && number < definition.rangemin) {
        throw errors.propertyValueOutsideDomain(name, value, `it must be at least ${definition.rangemin}`);
      }
      if (definition.rangemax !== null && number > definition.rangemax) {
        throw errors.propertyValueOutsideDomain(name, value, `it must be at most ${definition.rangemax}`);
      }
      return String(number);
    }
    case 'YORN': {
      const text = value.trim();
      if (text !== '0' && text !== '1')
        throw errors.propertyValueNotValid(name, value, 'YORN', '0 or 1 is expected');
      return text;
    }
    case 'ALN':
      if (value.length > MAX_ALN_LENGTH) {
        throw errors.propertyValueNotValid(
          name,
          `${value.slice(0, 20)}...`,
          'ALN',
          `it is longer than ${MAX_ALN_LENGTH} characters`,
        );
      }
      return value;
    default:
      throw errors.propertyValueNotValid(name, value, definition.maxtype);
  }
}
