import type { JsonRecord } from '../packages.js';
import * as repository from '../repository.js';
import type { Db } from '../repository.js';

/** A staged chunk of a package entry: its lines, and each line parsed. */
export interface ParsedChunk {
  lines: string[];
  bodies: JsonRecord[];
}

/**
 * The staged chunks of one manifest entry, in order, each read and parsed. `readAhead` starts on the next chunk while
 * the caller still writes the one before (a deploy calls it once that chunk's inserts are sent), so that parsing runs
 * while the database writes (docs/migration.md, "Deploy: speed"); whatever reading or parsing a chunk raised surfaces
 * when that chunk is taken, in the order an unhurried read would have raised it.
 */
export class StagedChunks {
  private readonly chunks: AsyncGenerator<string>;
  private ahead: Promise<ParsedChunk | undefined> | undefined;

  constructor(db: Db, dmpackageid: number, cfgdataorder: number) {
    this.chunks = repository.stagedChunks(db, dmpackageid, cfgdataorder);
  }

  /** Starts reading and parsing the next chunk, unless that has started already. */
  readAhead(): void {
    if (this.ahead) return;
    this.ahead = this.read();
    // Awaited by `take`; marked handled meanwhile, as a failure is only seen there.
    this.ahead.catch(() => undefined);
  }

  /** The next chunk, or undefined after the last. */
  async take(): Promise<ParsedChunk | undefined> {
    this.readAhead();
    const next = this.ahead!;
    this.ahead = undefined;
    return next;
  }

  /** After a failure: a read under way ends first (its statement belongs to the transaction the caller rolls back). */
  async abandon(): Promise<void> {
    await this.ahead?.catch(() => undefined);
    this.ahead = undefined;
    await this.chunks.return(undefined);
  }

  private async read(): Promise<ParsedChunk | undefined> {
    const next = await this.chunks.next();
    if (next.done) return undefined;
    const lines = next.value.split('\n');
    return { lines, bodies: lines.map((line) => JSON.parse(line) as JsonRecord) };
  }
}
