import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { requestIdOf } from './request-id.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A request as `requestIdOf` reads it: only its headers. */
function sent(headers: IncomingMessage['headers']): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

function generated(): string {
  return requestIdOf(sent({}));
}

test('generated request ids are UUID-shaped and count up in hex, carrying across digits', () => {
  const first = generated();
  assert.match(first, UUID_SHAPE);
  const prefix = first.slice(0, 24);
  let previous = Number.parseInt(first.slice(24), 16);
  // Far enough to carry from 9 to a, from f to 0 and across two digits.
  for (let count = 0; count < 300; count += 1) {
    const id = generated();
    assert.match(id, UUID_SHAPE);
    assert.equal(id.slice(0, 24), prefix);
    const counter = Number.parseInt(id.slice(24), 16);
    assert.equal(counter, previous + 1, `${id} follows ${previous.toString(16)}`);
    previous = counter;
  }
});

test("a client's safe request id is kept, an unsafe one replaced", () => {
  assert.equal(requestIdOf(sent({ 'x-request-id': 'trace-1:ab/c=' })), 'trace-1:ab/c=');
  assert.match(requestIdOf(sent({ 'x-request-id': 'bad\nid' })), UUID_SHAPE);
});
