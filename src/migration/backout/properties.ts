import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { errors, isMaximoError } from '../../errors.js';
import { COMMON, type PropertySets } from '../../properties/service.js';
import type { JsonRecord } from '../packages.js';
import { PROPERTY_STRUCTURE } from '../properties.js';
import { inheritedValue, removeClearedValue } from './repository.js';

/**
 * Restores the values of one property as they were before the deploy, through the property service's rules (so
 * the change is recorded in its history and heard by every process); a value the deploy added is removed again.
 */
export async function restoreProperty(
  sets: PropertySets,
  transaction: Kysely<Database>,
  record: JsonRecord,
): Promise<void> {
  const propName = String(record.propname);
  const values = Array.isArray(record.maxpropvalue) ? (record.maxpropvalue as JsonRecord[]) : [];
  for (const value of values) {
    const serverName = typeof value.servername === 'string' ? value.servername : COMMON;
    const absent = value._absent === true;
    const propValue = absent
      ? await inheritedValue(transaction, propName, serverName)
      : typeof value.propvalue === 'string'
        ? value.propvalue
        : null;
    try {
      await sets.set(transaction, { propName, serverName, propValue });
    } catch (error) {
      if (!isMaximoError(error)) throw error;
      throw errors.packageBackoutRefused(
        PROPERTY_STRUCTURE,
        `propname=${propName}, servername=${serverName}`,
        error.message,
        error.detail.attrName,
      );
    }
    if (absent) await removeClearedValue(transaction, propName, serverName);
  }
}
