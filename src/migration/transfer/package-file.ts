import { createHash } from 'node:crypto';
import { Readable, type Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { crc32 } from 'node:zlib';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import type * as yauzl from 'yauzl';
import { errors } from '../../errors.js';

/*
 * The package file (docs/migration.md, "The package file"): a zip of `manifest.json` and one NDJSON file per object
 * structure, written by yazl and read by yauzl, both streaming, so neither side holds a whole package in memory.
 */

/** Version of the files this service writes; it reads every version up to it (docs/migration.md, "The package file"). */
export const FORMAT_VERSION = 2;
/** Version 1: no drift hashes. A package without them is still written as version 1, which older targets read. */
export const FORMAT_VERSION_WITHOUT_DRIFT = 1;
export const MANIFEST_NAME = 'manifest.json';

/** Limits of an uploaded file; beyond them it is refused as a zip bomb or as malformed. */
export const FILE_LIMITS = {
  /** Entries in the archive: the manifest and one per object structure. */
  entries: 200,
  /** Bytes of the manifest once uncompressed. */
  manifestBytes: 1024 * 1024,
  /** Uncompressed bytes of the whole archive. */
  totalBytes: 4 * 1024 * 1024 * 1024,
  /** Uncompressed bytes per compressed byte of one entry (NDJSON of records compresses about 10:1). */
  ratio: 200,
  /** Entries smaller than this are not held to the ratio. */
  ratioFloor: 64 * 1024,
  /** Bytes of one NDJSON line (one record with its children). */
  lineBytes: 8 * 1024 * 1024,
} as const;

/**
 * Characters of a staged chunk beyond its first line: a chunk ends at `batchsize` records or at this size, whichever
 * comes first, so that records carrying attachments (base64 content, docs/migration.md "Work logs and attachments")
 * keep a chunk, and what a deploy reads ahead, bounded.
 */
export const STAGED_CHUNK_CHARS = 8 * 1024 * 1024;

const DataEntry = Type.Object(
  {
    name: Type.String({ pattern: '^data/[0-9]{3}-[A-Z0-9_]{1,30}\\.ndjson$' }),
    objectstructure: Type.String({ pattern: '^[A-Z0-9_]{1,30}$' }),
    cfgdataorder: Type.Integer({ minimum: 0 }),
    count: Type.Integer({ minimum: 0 }),
    bytes: Type.Integer({ minimum: 0 }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    /** Version 2: the root attributes the records' `_expected` drift hashes cover (docs/migration.md, "Drift guard"). */
    expectedattributes: Type.Optional(
      Type.Array(Type.String({ pattern: '^[a-z0-9_]{1,30}$' }), { maxItems: 2000 }),
    ),
    /** The root's child collections the drift hashes cover too, each with its attributes (absent: the root only). */
    expectedchildren: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ pattern: '^[a-z0-9_]{1,40}$' }),
            attributes: Type.Array(Type.String({ pattern: '^[a-z0-9_]{1,30}$' }), { maxItems: 2000 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false },
);

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(type: T) =>
  Type.Union([type, Type.Null()]);

const CustomAttribute = Type.Object(
  {
    objectname: Type.String({ pattern: '^[A-Z0-9_]{1,30}$' }),
    attributename: Type.String({ pattern: '^[A-Z][A-Z0-9_]{0,29}$' }),
    maxtype: Type.String({ maxLength: 10 }),
    length: nullable(Type.Integer({ minimum: 0 })),
    scale: nullable(Type.Integer({ minimum: 0 })),
    required: Type.Boolean(),
    defaultvalue: nullable(Type.String({ maxLength: 4000 })),
    domainid: nullable(Type.String({ maxLength: 18 })),
    title: Type.String({ maxLength: 100 }),
  },
  { additionalProperties: false },
);

/**
 * What an inverse package undoes besides records (docs/migration.md, "Back-out"): the deployed package, and the
 * configuration changes that restore the custom attributes as they were (REMOVE of an added one, CHANGE back).
 */
const Backout = Type.Object(
  {
    inverseof: Type.Integer({ minimum: 1 }),
    structural: Type.Array(
      Type.Object(
        {
          changetype: Type.Union([Type.Literal('REMOVE'), Type.Literal('CHANGE')]),
          objectname: Type.String({ pattern: '^[A-Z0-9_]{1,30}$' }),
          attributename: Type.String({ pattern: '^[A-Z][A-Z0-9_]{0,29}$' }),
          attribute: Type.Optional(CustomAttribute),
        },
        { additionalProperties: false },
      ),
      { maxItems: 10_000 },
    ),
  },
  { additionalProperties: false },
);

export const Manifest = Type.Object(
  {
    formatVersion: Type.Union([Type.Literal(FORMAT_VERSION_WITHOUT_DRIFT), Type.Literal(FORMAT_VERSION)]),
    source: Type.String({ minLength: 1, maxLength: 200 }),
    pkgdefname: Type.String({ minLength: 1, maxLength: 30 }),
    type: Type.Union([Type.Literal('CHANGE'), Type.Literal('SNAPSHOT')]),
    xmlaction: Type.Union([Type.Literal('AddChange'), Type.Literal('Replace')]),
    package: Type.String({ minLength: 1, maxLength: 60 }),
    readme: Type.Optional(Type.String({ maxLength: 1000 })),
    createby: Type.String({ maxLength: 30 }),
    createdate: Type.String({ format: 'date-time' }),
    entries: Type.Array(DataEntry, { maxItems: FILE_LIMITS.entries - 1 }),
    /** Custom attributes of the objects the package covers (structural changes on the target). */
    attributes: Type.Optional(Type.Array(CustomAttribute, { maxItems: 10_000 })),
    /** Only in an inverse package, captured at deploy (docs/migration.md, "Back-out"). */
    backout: Type.Optional(Backout),
  },
  { additionalProperties: false },
);
export type Manifest = Static<typeof Manifest>;
export type ManifestEntry = Manifest['entries'][number];

/** One data file of a package to write: its lines come from `lines`, read only when the zip reaches the entry. */
export interface DataSource {
  name: string;
  lines: () => AsyncIterable<string>;
}

/** The package file as a stream: the manifest first, then each data file in deploy order. */
export function writePackageFile(manifest: Manifest, sources: readonly DataSource[]): Readable {
  return Readable.from(zipped(manifest, sources));
}

async function* zipped(manifest: Manifest, sources: readonly DataSource[]): AsyncGenerator<Buffer> {
  // Loaded when a package is first written, not at start-up (docs/startup.md).
  const { default: yazl } = await import('yazl');
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2)), MANIFEST_NAME);
  for (const source of sources) {
    zip.addReadStreamLazy(source.name, (callback) => {
      callback(null, Readable.from(withNewlines(source.lines())));
    });
  }
  zip.end();
  yield* zip.outputStream as AsyncIterable<Buffer>;
}

async function* withNewlines(lines: AsyncIterable<string>): AsyncGenerator<Buffer> {
  for await (const line of lines) yield Buffer.from(`${line}\n`);
}

/** What a data file's lines are handed to as they are read: a batch of lines of one entry. */
export type LineSink = (entry: ManifestEntry, lines: string[], batch: number) => Promise<void>;

/**
 * Reads and checks an uploaded package file (`path`, on disk): every entry's name, type and size before any data is
 * read, then the manifest against its schema, then each data file against the manifest's size, count and SHA-256,
 * handing its lines to `sink` in batches of `batchSize`. Any fault refuses the whole file (the caller's transaction
 * undoes what the sink wrote). Every check but the data's own runs before the sink hears anything.
 */
export async function readPackageFile(
  path: string,
  batchSize: number,
  sink: LineSink,
  /** Hears the checked manifest before any data is read; false: check the data but hand none to the sink. */
  onManifest: (manifest: Manifest) => Promise<boolean>,
): Promise<Manifest> {
  // Loaded when a package is first read, not at start-up (docs/startup.md).
  const { default: unzip } = await import('yauzl');
  const zip = await openZip(unzip, path);
  try {
    const entries = await listEntries(unzip, zip);
    const manifestEntry = entries.get(MANIFEST_NAME);
    if (!manifestEntry) throw errors.packageFileRefused(`it holds no ${MANIFEST_NAME}`);
    if (manifestEntry.uncompressedSize > FILE_LIMITS.manifestBytes)
      throw errors.packageFileRefused('the manifest is too large', MANIFEST_NAME);
    const manifest = parseManifest(await readWhole(zip, manifestEntry));
    const listed = new Set([MANIFEST_NAME, ...manifest.entries.map((entry) => entry.name)]);
    for (const name of entries.keys()) {
      if (!listed.has(name))
        throw errors.packageFileRefused('it holds an entry the manifest does not list', name);
    }
    const store = await onManifest(manifest);
    const handOver: LineSink = store ? sink : async () => undefined;
    for (const expected of manifest.entries) {
      const entry = entries.get(expected.name);
      if (!entry) throw errors.packageFileRefused('an entry the manifest lists is missing', expected.name);
      if (entry.uncompressedSize !== expected.bytes)
        throw errors.packageFileRefused('an entry is not of the size the manifest gives', expected.name);
      await readLines(zip, entry, expected, batchSize, handOver);
    }
    return manifest;
  } finally {
    zip.close();
  }
}

function openZip(unzip: Unzip, path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    unzip.open(
      path,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true },
      (error, zip) => {
        if (error) reject(errors.packageFileRefused(`it is not a readable zip archive (${error.message})`));
        else resolve(zip);
      },
    );
  });
}

/** Every entry, checked by its central-directory record alone: names, kinds, sizes, duplicates. */
function listEntries(unzip: Unzip, zip: yauzl.ZipFile): Promise<Map<string, yauzl.Entry>> {
  if (zip.entryCount > FILE_LIMITS.entries)
    return Promise.reject(errors.packageFileRefused(`it holds more than ${FILE_LIMITS.entries} entries`));
  return new Promise((resolve, reject) => {
    const entries = new Map<string, yauzl.Entry>();
    let total = 0;
    const fail = (error: unknown) => {
      zip.removeAllListeners();
      reject(error);
    };
    zip.on('error', (error: Error) =>
      fail(errors.packageFileRefused(`it is not a valid zip archive (${error.message})`)),
    );
    zip.on('entry', (entry: yauzl.Entry) => {
      const name = entry.fileName;
      const refusal = entryRefusal(unzip, entry, entries);
      if (refusal) return fail(errors.packageFileRefused(refusal, name));
      total += entry.uncompressedSize;
      if (total > FILE_LIMITS.totalBytes)
        return fail(errors.packageFileRefused('its uncompressed size is beyond the limit', name));
      entries.set(name, entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.readEntry();
  });
}

type Unzip = Pick<typeof yauzl, 'open' | 'validateFileName'>;

const UNIX_FILE_TYPE_MASK = 0o170000;
const UNIX_REGULAR_FILE = 0o100000;

function entryRefusal(
  unzip: Unzip,
  entry: yauzl.Entry,
  seen: ReadonlyMap<string, yauzl.Entry>,
): string | undefined {
  const name = entry.fileName;
  if (unzip.validateFileName(name) !== null || name.split('/').some((part) => part === '..' || part === '.'))
    return 'an entry has an absolute path or leaves the archive';
  if (name.endsWith('/')) return 'it holds a directory entry';
  if (seen.has(name)) return 'an entry appears twice';
  // Unix mode in the high 16 bits (when made on Unix): only regular files, never links or devices.
  const mode = (entry.externalFileAttributes >>> 16) & UNIX_FILE_TYPE_MASK;
  if (mode !== 0 && mode !== UNIX_REGULAR_FILE) return 'an entry is a link or not a regular file';
  if (entry.isEncrypted()) return 'an entry is encrypted';
  if (!entry.canDecodeFileData()) return 'an entry uses an unsupported compression';
  if (
    entry.uncompressedSize > FILE_LIMITS.ratioFloor &&
    entry.uncompressedSize > Math.max(entry.compressedSize, 1) * FILE_LIMITS.ratio
  )
    return 'an entry expands beyond the allowed compression ratio';
  return undefined;
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<AsyncIterable<Buffer>> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error)
        reject(errors.packageFileRefused(`an entry cannot be read (${error.message})`, entry.fileName));
      else resolve(crcChecked(stream, entry));
    });
  });
}

/**
 * The entry's bytes, refused at the end when they do not have the CRC-32 its directory record gives: yauzl checks
 * sizes only, and a damaged entry must not pass for a package (docs/migration.md, "Uploads").
 */
async function* crcChecked(stream: Readable, entry: yauzl.Entry): AsyncGenerator<Buffer> {
  let crc = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    crc = crc32(buffer, crc);
    yield buffer;
  }
  if (crc >>> 0 !== entry.crc32 >>> 0)
    throw errors.packageFileRefused('an entry does not match its CRC-32', entry.fileName);
}

async function readWhole(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of await openEntry(zip, entry)) chunks.push(chunk);
  } catch (error) {
    throw asRefusal(error, entry.fileName);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseManifest(text: string): Manifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw errors.packageFileRefused('the manifest is not JSON', MANIFEST_NAME);
  }
  if (!Value.Check(Manifest, parsed)) {
    const first = Value.Errors(Manifest, parsed)[0];
    throw errors.packageFileRefused(
      `the manifest is not valid (${first ? `${first.instancePath || 'manifest'} ${first.message}` : 'schema'})`,
      MANIFEST_NAME,
    );
  }
  const names = new Set(parsed.entries.map((entry) => entry.name));
  if (names.size !== parsed.entries.length || names.has(MANIFEST_NAME))
    throw errors.packageFileRefused('the manifest lists an entry twice', MANIFEST_NAME);
  return parsed;
}

/** Streams one data file: lines to the sink in batches; size, line count and SHA-256 checked at the end. */
async function readLines(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  expected: ManifestEntry,
  batchSize: number,
  sink: LineSink,
): Promise<void> {
  const hash = createHash('sha256');
  let bytes = 0;
  let count = 0;
  let batch: string[] = [];
  let batchChars = 0;
  let batchNumber = 0;
  let pending = '';
  const decoder = new StringDecoder('utf8');
  try {
    for await (const buffer of await openEntry(zip, entry)) {
      hash.update(buffer);
      bytes += buffer.length;
      pending += decoder.write(buffer);
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        batch.push(pending.slice(0, newline));
        batchChars += newline;
        count += 1;
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
        if (batch.length >= batchSize || batchChars >= STAGED_CHUNK_CHARS) {
          await sink(expected, batch, batchNumber++);
          batch = [];
          batchChars = 0;
        }
      }
      if (pending.length > FILE_LIMITS.lineBytes)
        throw errors.packageFileRefused('a record line is too long', entry.fileName);
    }
  } catch (error) {
    throw asRefusal(error, entry.fileName);
  }
  if (pending.length > 0) throw errors.packageFileRefused('the last record line is cut off', entry.fileName);
  if (bytes !== expected.bytes || hash.digest('hex') !== expected.sha256)
    throw errors.packageFileRefused('an entry does not match its SHA-256 in the manifest', entry.fileName);
  if (count !== expected.count)
    throw errors.packageFileRefused(
      'an entry does not hold the number of records the manifest gives',
      entry.fileName,
    );
  if (batch.length > 0) await sink(expected, batch, batchNumber);
}

function asRefusal(error: unknown, name: string): unknown {
  if (error instanceof Error && !('reasonCode' in error))
    return errors.packageFileRefused(`an entry cannot be read (${error.message})`, name);
  return error;
}

/** Streams a readable into a writable, refusing more than `limit` bytes. */
export async function copyLimited(from: AsyncIterable<Buffer>, to: Writable, limit: number): Promise<number> {
  let total = 0;
  for await (const chunk of from) {
    total += chunk.length;
    if (total > limit) throw errors.bodyTooLarge(limit);
    if (!to.write(chunk)) await new Promise((resolve) => to.once('drain', resolve));
  }
  return total;
}
