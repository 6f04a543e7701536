import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

export const SLAPD = '/usr/sbin/slapd';
const SLAPADD = '/usr/sbin/slapadd';
const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIR = '/usr/lib/ldap';

export const LDAP_BASE = 'dc=eas,dc=test';
export const LDAP_PEOPLE = `ou=people,${LDAP_BASE}`;
/** Passwords of the directory's users: different from the database's, so a test can tell which one was checked. */
export const LDAP_PASSWORDS = {
  wilson: 'wilson-ldap-pw',
  smith: 'smith ldap pw',
  maxadmin: 'maxadmin-ldap-pw',
};
/** A directory user with no user record in the database. */
export const LDAP_STRANGER = { uid: 'stranger', password: 'stranger-ldap-pw' };

/** Whether the OpenLDAP server (Debian package `slapd`) is installed. */
export function slapdInstalled(): boolean {
  return existsSync(SLAPD) && existsSync(SLAPADD);
}

/**
 * Whether a test file's LDAP tests can run. CI must have slapd (.ci/run installs it): there a missing slapd adds a
 * failing test, so the file fails instead of passing with nothing tested; elsewhere the caller skips.
 */
export function slapdForTests(): boolean {
  const installed = slapdInstalled();
  if (!installed && process.env.CI === 'true') {
    test('slapd is installed', () => {
      assert.fail(`${SLAPD} is missing: the LDAP tests need the Debian package slapd (see .ci/run)`);
    });
  }
  return installed;
}

function person(uid: string, cn: string, password: string): string {
  return [
    `dn: uid=${uid},${LDAP_PEOPLE}`,
    'objectClass: inetOrgPerson',
    `uid: ${uid}`,
    `cn: ${cn}`,
    `sn: ${cn.split(' ').at(-1) ?? cn}`,
    `userPassword: ${password}`,
    '',
  ].join('\n');
}

const fixture = [
  [
    `dn: ${LDAP_BASE}`,
    'objectClass: dcObject',
    'objectClass: organization',
    'dc: eas',
    'o: EAS test',
    '',
  ].join('\n'),
  [`dn: ${LDAP_PEOPLE}`, 'objectClass: organizationalUnit', 'ou: people', ''].join('\n'),
  person('wilson', 'Mike Wilson', LDAP_PASSWORDS.wilson),
  person('smith', 'Jane Smith', LDAP_PASSWORDS.smith),
  person('maxadmin', 'Maximo Administrator', LDAP_PASSWORDS.maxadmin),
  person(LDAP_STRANGER.uid, 'Sam Stranger', LDAP_STRANGER.password),
].join('\n');

function config(dir: string): string {
  return [
    `include ${SCHEMA_DIR}/core.schema`,
    `include ${SCHEMA_DIR}/cosine.schema`,
    `include ${SCHEMA_DIR}/inetorgperson.schema`,
    `modulepath ${MODULE_DIR}`,
    'moduleload back_mdb',
    `pidfile ${join(dir, 'slapd.pid')}`,
    // Anonymous search is what the search-based login mode relies on when no bind DN is configured.
    'access to attrs=userPassword by self read by anonymous auth by * none',
    'access to * by * read',
    'database mdb',
    'maxsize 10485760',
    `suffix "${LDAP_BASE}"`,
    `rootdn "cn=admin,${LDAP_BASE}"`,
    'rootpw admin-secret',
    `directory ${join(dir, 'data')}`,
    '',
  ].join('\n');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface Slapd {
  url: string;
  stop(): Promise<void>;
}

/**
 * A throwaway OpenLDAP server on 127.0.0.1 with the fixture directory: a temporary slapd.conf with an mdb database,
 * loaded offline with slapadd, then slapd in the foreground (so it dies with the test process's kill).
 */
export async function startSlapd(): Promise<Slapd> {
  const dir = await mkdtemp(join(tmpdir(), 'eas-slapd-'));
  await mkdir(join(dir, 'data'));
  const conf = join(dir, 'slapd.conf');
  await writeFile(conf, config(dir));
  await writeFile(join(dir, 'fixture.ldif'), fixture);
  const loaded = spawnSync(SLAPADD, ['-f', conf, '-l', join(dir, 'fixture.ldif')], { encoding: 'utf8' });
  if (loaded.status !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`slapadd failed: ${loaded.stderr}`);
  }
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  // `-d 0` keeps slapd in the foreground without debug output.
  const child: ChildProcess = spawn(SLAPD, ['-d', '0', '-f', conf, '-h', `${url}/`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
      throw new Error(`slapd did not start on ${url}: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
