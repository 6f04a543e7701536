import { BoundedCache } from '../util/bounded-cache.js';

/**
 * getProperty's answer, `{"return": value}`, encoded once per value: property values change rarely (the registry
 * follows changes across processes, src/properties/service.ts), and the body depends on nothing else, so a read
 * costs a lookup instead of a serialization and a copy into a buffer. Kept by value, so that a changed value
 * simply finds its own entry; bounded, since a value is at most a few kilobytes but the set of values is open.
 */
export class PropertyAnswers {
  private readonly encoded = new BoundedCache<string, Buffer>(256);

  of(value: string): Buffer {
    return this.encoded.getOrCompute(value, encodeAnswer);
  }
}

function encodeAnswer(value: string): Buffer {
  return Buffer.from(JSON.stringify({ return: value }));
}
