import type { Database } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { ObjectStructure } from '../../metadata/registry.js';
import type { StoredValue } from '../../oslc/values.js';
import type { WriteRules } from '../../oslc/write-extensions.js';
import type { MigrationContext } from '../context.js';
import { definitionNamed } from '../packages.js';
import { isPropertyStructure } from '../properties.js';
import * as repository from '../repository.js';
import type { PackageDefinition } from '../repository.js';
import { snapshotPlan } from './records.js';
import { setupFirst } from '../setup-order.js';

/** Write rules of package definitions: `source` from this deployment; CHANGE activation checks. */
export function definitionRules(context: Pick<MigrationContext, 'sourceIdentity'>): WriteRules {
  return {
    beforeInsert: async ({ values }) => {
      values.source = context.sourceIdentity();
      values.statusdate = new Date();
      checkActivation(values, values);
    },
    beforeUpdate: async ({ values, before }) => {
      if ('status' in values && values.status !== before.status) values.statusdate = new Date();
      checkActivation(values, { ...before, ...values });
    },
  };
}

/**
 * Write rules of a definition's content: its where clause is parsed and planned against its object structure when
 * it is written, and refused with the query engine's own error (docs/migration.md, "Where clauses").
 */
export function contentRules(context: Pick<MigrationContext, 'resources'>): WriteRules {
  const checkWhereClause = (record: Record<string, StoredValue>): void => {
    const structure = context.resources.findObjectStructure(String(record.objectstructure ?? ''));
    // An unknown structure is refused when the package is created, as before (contentOf).
    if (structure && typeof record.whereclause === 'string')
      snapshotPlan(context.resources, structure, record.whereclause);
  };
  return {
    beforeInsert: async ({ values }) => checkWhereClause(values),
    beforeUpdate: async ({ values, before }) => {
      if ('whereclause' in values || 'objectstructure' in values) checkWhereClause({ ...before, ...values });
    },
  };
}

/**
 * Activating a CHANGE definition needs status APPR and no object structure whose root is keyed by its unique id
 * (a record moved to another deployment has another unique id there).
 */
function checkActivation(changed: Record<string, StoredValue>, record: Record<string, StoredValue>): void {
  if (changed.active !== true || record.type !== 'CHANGE') return;
  const name = String(record.pkgdefname);
  if (record.status !== 'APPR')
    throw errors.packageDefinitionRefused(
      name,
      'a CHANGE definition must have the status APPR to be activated',
    );
}

/** Content structures of a definition, checked: known, and for CHANGE not keyed by a unique id. */
export async function contentOf(
  context: Pick<MigrationContext, 'db' | 'resources'>,
  definition: PackageDefinition,
): Promise<Array<{ structure: ObjectStructure; where: string | null; order: number }>> {
  const content = setupFirst(await repository.definitionContent(context.db, definition.pkgdefname), (name) =>
    context.resources.findObjectStructure(name),
  );
  if (content.length === 0)
    throw errors.packageDefinitionRefused(definition.pkgdefname, 'it names no object structure');
  return content.map((entry, index) => {
    const structure = context.resources.findObjectStructure(entry.objectstructure);
    if (!structure)
      throw errors.packageDefinitionRefused(
        definition.pkgdefname,
        `the object structure ${entry.objectstructure} does not exist`,
      );
    // A clause stored before it was checked on write is refused here, before any package exists.
    snapshotPlan(context.resources, structure, entry.whereclause);
    return { structure, where: entry.whereclause, order: index + 1 };
  });
}

/**
 * A CHANGE definition cannot cover an object whose records are told apart by their unique id alone, nor system
 * properties: they are set outside the write path, so no write of theirs is tracked.
 */
export function refuseUniqueIdKeys(pkgdefname: string, structure: ObjectStructure): void {
  if (isPropertyStructure(structure))
    throw errors.packageDefinitionRefused(
      pkgdefname,
      `the object structure ${structure.name} migrates in SNAPSHOT packages only`,
    );
  const object = structure.root.object;
  if (object.keys.length === 0 || object.keys.includes(object.uniqueId))
    throw errors.packageDefinitionRefused(
      pkgdefname,
      `the object structure ${structure.name} is keyed by the unique id ${object.uniqueId}, which differs between deployments`,
    );
}

/** `POST /dm/reset`: the tracked history of a CHANGE definition cleared. */
export async function resetDefinition(
  context: Pick<MigrationContext, 'db'>,
  pkgdefname: string,
): Promise<{ pkgdefname: string; active: boolean }> {
  const definition = await definitionNamed(context.db, pkgdefname);
  if (definition.type !== 'CHANGE')
    throw errors.packageDefinitionRefused(definition.pkgdefname, 'only a CHANGE definition tracks changes');
  await repository.clearChanges(context.db, definition.pkgdefname);
  return { pkgdefname: definition.pkgdefname, active: definition.active };
}

/** `POST /dm/toggleactive`: the listener of a CHANGE definition switched on (or off when on). */
export async function toggleActive(
  context: Pick<MigrationContext, 'db' | 'storage' | 'resources'>,
  pkgdefname: string,
): Promise<{ pkgdefname: string; active: boolean }> {
  const definition = await definitionNamed(context.db, pkgdefname);
  if (definition.type !== 'CHANGE')
    throw errors.packageDefinitionRefused(definition.pkgdefname, 'only a CHANGE definition has a listener');
  const active = !definition.active;
  if (active) {
    if (definition.status !== 'APPR')
      throw errors.packageDefinitionRefused(
        definition.pkgdefname,
        'a CHANGE definition must have the status APPR to be activated',
      );
    for (const { structure } of await contentOf(context, definition))
      refuseUniqueIdKeys(definition.pkgdefname, structure);
  }
  await context.db.transaction().execute(async (trx) => {
    await repository.setDefinitionActive(trx, definition.pkgdefname, active);
    await context.storage.bus.notify<Database>(trx, 'object', 'DMPACKAGEDEF');
  });
  context.storage.bus.deliverLocally('object', 'DMPACKAGEDEF');
  return { pkgdefname: definition.pkgdefname, active };
}
