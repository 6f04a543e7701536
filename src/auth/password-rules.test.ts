import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import { MetadataRegistry } from '../metadata/registry.js';
import type { Row } from '../oslc/repository.js';
import { verifyPassword } from './password.js';
import { userWriteRules } from './password-rules.js';
import type { UserProfile } from './types.js';

const object = new MetadataRegistry().object('MAXUSER');
const context = (values: Row) => ({
  db: {} as Kysely<DynamicDatabase>,
  object,
  user: {} as UserProfile,
  values,
});

test('the MAXUSER write rules hash a sent password on insert and on update', async () => {
  const inserted: Row = { userid: 'NEWUSER', password: 'secret-one' };
  await userWriteRules.beforeInsert!(context(inserted));
  assert.match(String(inserted.password), /^scrypt\$/);
  assert.equal(await verifyPassword('secret-one', String(inserted.password)), true);

  const changed: Row = { password: 'secret-two' };
  await userWriteRules.beforeUpdate!({ ...context(changed), before: { userid: 'NEWUSER' } });
  assert.equal(await verifyPassword('secret-two', String(changed.password)), true);
});

test('the MAXUSER write rules leave a write without a password alone', async () => {
  const changed: Row = { displayname: 'Someone' };
  await userWriteRules.beforeUpdate!({ ...context(changed), before: { userid: 'NEWUSER' } });
  assert.deepEqual(changed, { displayname: 'Someone' });
});
