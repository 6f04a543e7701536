import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyExpiry } from '../../web/console/keys.js';
import { keyStatus } from './apikey-status.js';

/** Expired keys are marked as expired, in `eas apikey list` and on the console's API keys page. */
const now = Date.parse('2026-11-28T12:00:00Z');
const record = (creationdate: string, expiration: number) => ({
  userid: 'SMITH',
  href: 'os/mxapiapikey/1',
  creationdate,
  expiration,
});

test('eas apikey list: a key past its expiration is expired; a live one or one that never expires is active', () => {
  assert.equal(keyStatus(record('2026-11-28T11:00:00Z', 30), now), 'expired');
  assert.equal(keyStatus(record('2026-11-28T11:00:00Z', 60), now), 'expired', 'expired at the minute');
  assert.equal(keyStatus(record('2026-11-28T11:00:00Z', 90), now), 'active');
  assert.equal(keyStatus(record('2020-01-01T00:00:00Z', -1), now), 'active');
});

test('console: the expiry of a key, and whether it has passed', () => {
  assert.deepEqual(keyExpiry(record('2026-11-28T11:00:00Z', 30), now), {
    at: new Date('2026-11-28T11:30:00Z'),
    expired: true,
  });
  assert.equal(keyExpiry(record('2026-11-28T11:00:00Z', 90), now).expired, false);
  assert.deepEqual(keyExpiry(record('2020-01-01T00:00:00Z', -1), now), { at: undefined, expired: false });
});
