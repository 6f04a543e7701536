import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { exampleRequest } from './welcome.js';

const BASE = 'http://localhost:7001/maximo';

/** The welcome's example line as a reader pastes it into sh; `curl` stands in, printing its arguments. */
function pasted(line: string, env: Record<string, string>) {
  const script = `curl() { printf '%s\\n' "$@"; }\n${line}`;
  const result = spawnSync('sh', ['-c', script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('a generated password: the request carries its maxauth value', () => {
  const run = pasted(exampleRequest(BASE, 's3cret-pw'), {});
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    new RegExp(`^maxauth: ${Buffer.from('MAXADMIN:s3cret-pw').toString('base64')}$`, 'm'),
  );
});

test('a chosen password: built from EAS_ADMIN_PASSWORD; unset, nothing is sent and the line says what to set', () => {
  const line = exampleRequest(BASE, undefined);
  const set = pasted(line, { EAS_ADMIN_PASSWORD: 'chosen-pw' });
  assert.equal(set.code, 0, set.stderr);
  assert.match(
    set.stdout,
    new RegExp(`^maxauth: ${Buffer.from('MAXADMIN:chosen-pw').toString('base64')}$`, 'm'),
  );
  const unset = pasted(line, {});
  assert.notEqual(unset.code, 0);
  assert.equal(unset.stdout, '', 'curl was not run with an empty password');
  assert.match(unset.stderr, /set EAS_ADMIN_PASSWORD to the MAXADMIN password/);
});
