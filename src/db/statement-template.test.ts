import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import { historyInsert } from '../properties/repository.js';
import { keyUpsert } from '../apikeys/repository.js';
import type { AuditRecord } from '../audit/types.js';
import { preparedName, StatementTemplate } from './prepared-statements.js';
import type { Database } from './schema.js';

/** Compiles only: the dialect's pool is never asked for a connection. */
const db = new Kysely<Database>({
  dialect: new PostgresDialect({ pool: () => Promise.reject(new Error('no connection in this test')) }),
});

function historyRow(n: number) {
  return {
    propname: `mxe.test.${n}`,
    servername: n % 2 === 0 ? 'COMMON' : 'SERVER1',
    oldvalue: n % 3 === 0 ? null : String(n),
    newvalue: String(n + 1),
    changeby: 'MAXADMIN',
    changedate: new Date(1_700_000_000_000 + n),
  };
}

function auditRecord(n: number): AuditRecord {
  return {
    eventtime: new Date(1_700_000_000_000 + n),
    eventtype: 'property.set',
    outcome: 'SUCCESS',
    userid: 'MAXADMIN',
    authscheme: n % 2 === 0 ? 'SESSION' : null,
    keyid: null,
    sessiondigest: 'abcdef0123456789',
    clientaddr: '127.0.0.1',
    requestid: `req-${n}`,
    servername: 'eas-test',
    objectname: 'MAXPROP',
    objectkey: `mxe.test.${n}/COMMON`,
    beforevalue: JSON.stringify(String(n)),
    aftervalue: JSON.stringify(String(n + 1)),
    detail: null,
    mac: n.toString(16).padStart(64, '0'),
  };
}

function sameStatement(actual: CompiledQuery, expected: CompiledQuery): void {
  assert.equal(actual.sql, expected.sql);
  assert.deepEqual(actual.parameters, expected.parameters);
}

describe('statement templates', () => {
  test("a property's history row, with and without its record: Kysely's own statement, for every value", () => {
    const template = new StatementTemplate(historyInsert);
    for (let n = 0; n < 20; n++) {
      const record = n % 4 === 0 ? undefined : auditRecord(n);
      sameStatement(
        template.compile(db, historyRow(n), record),
        historyInsert(db, historyRow(n), record).compile(),
      );
    }
    const withRecord = template.compile(db, historyRow(1), auditRecord(1)).sql;
    const without = template.compile(db, historyRow(1)).sql;
    assert.notEqual(withRecord, without, 'a record is another shape');
    assert.ok(
      preparedName(withRecord) !== undefined && preparedName(without) !== undefined,
      'both sent by name',
    );
  });

  test("a key's upsert: fields written twice and the statement's own constants", () => {
    const template = new StatementTemplate(keyUpsert);
    for (let n = 0; n < 10; n++) {
      const key = {
        userid: `USER${n}`,
        sealed: `sealed-${n}`,
        digest: `digest-${n}`,
        expiration: n - 1,
        creationdate: new Date(1_700_000_000_000 + n),
      };
      const compiled = template.compile(db, key, n % 2 === 0 ? auditRecord(n) : undefined);
      sameStatement(compiled, keyUpsert(db, key, n % 2 === 0 ? auditRecord(n) : undefined).compile());
      assert.equal(compiled.parameters.filter((value) => value === key.sealed).length, 2);
      assert.ok(compiled.parameters.includes(false), 'exposedinurl reset is a constant of the statement');
    }
  });

  test('a field left undefined is another shape, not a parameter of the first', () => {
    const template = new StatementTemplate(historyInsert);
    const full = historyRow(4);
    const { oldvalue: _oldvalue, ...rest } = full;
    const partial = { ...rest, oldvalue: undefined };
    sameStatement(template.compile(db, full), historyInsert(db, full).compile());
    const compiled = template.compile(db, partial as unknown as typeof full);
    sameStatement(compiled, historyInsert(db, partial as unknown as typeof full).compile());
    assert.doesNotMatch(compiled.sql, /"oldvalue"/);
  });

  test('a build whose text depends on a value is refused on its first use', () => {
    const template = new StatementTemplate(
      (kysely: Kysely<Database>, row: { propname: string; log: boolean }) =>
        row.log
          ? kysely
              .insertInto('maxprophistory')
              .values({ propname: row.propname, servername: 'COMMON' } as never)
          : kysely.deleteFrom('maxprophistory').where('propname', '=', row.propname),
    );
    assert.throws(
      () => template.compile(db, { propname: 'mxe.test', log: false }),
      /statement template does not reproduce its statement/,
    );
  });
});
