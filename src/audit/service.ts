import type { Kysely } from 'kysely';
import type { Storage } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { isCredentialName, REDACTED } from '../http/redact.js';
import { GENESIS, chainKey, digestOf, fingerprint, macOf, sameHex, type SealedContent } from './chain.js';
import {
  chainHead,
  deleteThrough,
  expiredPrefix,
  insertRecord,
  latestSweep,
  lockSealing,
  rekeyRecords,
  recordsSince,
  sealRecords,
  sealedRecords,
  unsealedRecords,
  type AuditRow,
} from './repository.js';
import type { AuditEvent, AuditRecord, AuditRecorder, RequestFacts } from './types.js';

/** The retention property (docs/audit.md, "Retention") and its default. */
export const RETENTION_PROPERTY = 'eas.audit.retentiondays';
export const DEFAULT_RETENTION_DAYS = 400;

const SEAL_BATCH = 500;
/** After a record, the wait before sealing: a busy process's records of a second are sealed together (README). */
const SEAL_DELAY_MS = 1_000;
const SEAL_SWEEP_MS = 5_000;
const RETENTION_SWEEP_MS = 6 * 3_600_000;
const DAY_MS = 86_400_000;
const MAX_VALUE_LENGTH = 8_000;

/** Names of values that are never recorded, beyond the request log's credential names (src/http/redact.ts). */
const SECRET_NAME = /(password|passwd|secret|apikey|token|cookie|credential|privatekey|_lpwd)/i;

/** The facts of an event without an origin (the shell, a timer, a batch of logins): its own fields say who. */
const NO_REQUEST: RequestFacts = {
  userid: null,
  authscheme: null,
  keyid: null,
  sessiondigest: null,
  clientaddr: null,
  requestid: null,
};

export interface AuditTrailOptions {
  storage: Storage;
  /** The master key of the deployment (src/apikeys/vault.ts): the chain's key is derived from it. */
  masterKey: Buffer;
  serverName: string;
  /** Days records are kept; default: DEFAULT_RETENTION_DAYS (the property is read live, see `retentionFrom`). */
  retentionDays?: () => number;
  /** Each sealed record is logged through it as one info line (EAS_AUDIT_LOG); undefined: not logged. */
  log?: { info(details: object, message: string): void } | undefined;
  /** Told of every record sealed (metrics) and of every failed verification. */
  onSealed?: (row: AuditRow) => void;
  onVerificationFailure?: () => void;
  onBackgroundError?: (error: unknown, what: string) => void;
  now?: () => number;
}

/** What `verify` found (docs/audit.md, "Verifying"). */
export interface VerificationReport {
  ok: boolean;
  /** Sealed records checked, and records written but not sealed yet. */
  checked: number;
  unsealed: number;
  /** Where the chain starts (1, or after the latest retention sweep) and ends. */
  firstSeq: number;
  head: { chainseq: number; digest: string } | null;
  /** The first record found wrong, with why; absent when `ok`. */
  problem?: { auditid: number | null; chainseq: number | null; reason: string };
}

/**
 * The audit trail (src/audit/README.md): records written in the transaction of each change, chained afterwards by
 * a sealing step that any process may run, verified, swept after the retention period and exported.
 */
export class AuditTrail implements AuditRecorder {
  private readonly db: Kysely<Database>;
  private readonly key: Buffer;
  private readonly now: () => number;
  private keyFingerprint: (apikey: string) => string = fingerprint;
  private sealTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private retentionTimer: NodeJS.Timeout | undefined;
  private sealing: Promise<number> | undefined;
  private closed = false;
  private retentionDays: () => number;

  constructor(private readonly options: AuditTrailOptions) {
    this.db = options.storage.db;
    this.key = chainKey(options.masterKey);
    this.now = options.now ?? Date.now;
    this.retentionDays = options.retentionDays ?? (() => DEFAULT_RETENTION_DAYS);
  }

  /** Where the retention period is read (the system property, once the property service is up). */
  retentionFrom(days: () => number): void {
    this.retentionDays = days;
  }

  /** How a presented API key is named in a record: its fingerprint from the key service, never its value. */
  useKeyFingerprint(keyFingerprint: (apikey: string) => string): void {
    this.keyFingerprint = keyFingerprint;
  }

  /** Seals now and then, and sweeps by the retention property; both also run when asked (`seal`, `sweep`). */
  start(): void {
    this.sweepTimer = setInterval(() => this.sealInBackground(), SEAL_SWEEP_MS).unref();
    this.retentionTimer = setInterval(() => {
      this.sweep().catch((error: unknown) =>
        this.options.onBackgroundError?.(error, 'audit retention sweep failed'),
      );
    }, RETENTION_SWEEP_MS).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.sealTimer);
    clearInterval(this.sweepTimer);
    clearInterval(this.retentionTimer);
    await this.sealing?.catch(() => undefined);
  }

  async record(db: Kysely<Database>, event: AuditEvent): Promise<void> {
    await insertRecord(db, this.rowOf(event));
    this.scheduleSeal();
  }

  async recordAlone(event: AuditEvent): Promise<void> {
    await this.db.transaction().execute((transaction) => this.record(transaction, event));
  }

  recordOf(event: AuditEvent): AuditRecord {
    // Sealing a second from now finds nothing of it if its transaction rolls back.
    this.scheduleSeal();
    return this.rowOf(event);
  }

  /** The row of an event: its origin's facts, the event's own, its values without secrets, and its MAC. */
  rowOf(event: AuditEvent): AuditRecord {
    const facts = event.origin ? event.origin.facts(this.keyFingerprint) : NO_REQUEST;
    const content = {
      eventtime: new Date(this.now()),
      eventtype: event.type.slice(0, 40),
      outcome: event.outcome ?? 'SUCCESS',
      userid: clip(event.user !== undefined ? event.user : facts.userid, 100),
      authscheme: clip(event.scheme ?? facts.authscheme, 16),
      keyid: facts.keyid,
      sessiondigest: facts.sessiondigest,
      clientaddr: clip(event.address !== undefined ? event.address : facts.clientaddr, 64),
      requestid: facts.requestid,
      servername: clip(this.options.serverName, 100),
      objectname: clip(event.object ?? null, 40),
      objectkey: clip(event.key ?? null, 254),
      beforevalue: shown(event.before),
      aftervalue: shown(event.after),
      detail: shown(event.detail),
    } satisfies SealedContent;
    return { ...content, mac: macOf(this.key, content) };
  }

  /**
   * Chains the committed records not sealed yet, oldest first, after the current head; answers how many. One
   * sealer at a time (an advisory lock): `wait` false gives way to a process already sealing.
   */
  seal(wait = true): Promise<number> {
    // A seal asked for now covers the one scheduled after the latest record.
    clearTimeout(this.sealTimer);
    this.sealTimer = undefined;
    const run = async (): Promise<number> => {
      let total = 0;
      for (;;) {
        const sealed = await this.db.transaction().execute(async (transaction) => {
          if (!(await lockSealing(transaction, wait))) return [];
          return this.sealBatch(transaction);
        });
        for (const row of sealed) this.announce(row);
        total += sealed.length;
        if (sealed.length < SEAL_BATCH) return total;
      }
    };
    const previous = this.sealing ?? Promise.resolve(0);
    const next = previous.catch(() => 0).then(run);
    this.sealing = next;
    return next;
  }

  /** Chains up to SEAL_BATCH committed records after the head, under the sealing lock the caller holds. */
  private async sealBatch(transaction: Kysely<Database>): Promise<AuditRow[]> {
    const head = await chainHead(transaction);
    const anchor = head ? undefined : await this.anchor(transaction);
    let previous = head?.digest ?? anchor!.digest;
    let chainseq = head?.chainseq ?? anchor!.firstSeq - 1;
    const seals: Array<{ auditid: number; chainseq: number; digest: string }> = [];
    const rows: AuditRow[] = [];
    let afterId = 0;
    // Records whose MAC is wrong were not written by the service: left unsealed, for verify to name.
    while (seals.length < SEAL_BATCH) {
      const batch = await unsealedRecords(transaction, SEAL_BATCH, afterId);
      if (batch.length === 0) break;
      for (const row of batch) {
        afterId = row.auditid;
        if (!sameHex(row.mac, macOf(this.key, row)) || seals.length >= SEAL_BATCH) continue;
        chainseq += 1;
        previous = digestOf(this.key, previous, chainseq, row.mac);
        seals.push({ auditid: row.auditid, chainseq, digest: previous });
        rows.push(row);
      }
    }
    await sealRecords(transaction, seals);
    return rows;
  }

  /** Walks the chain from its start and names the first record altered, removed or inserted out of order. */
  async verify(): Promise<VerificationReport> {
    await this.seal(true);
    const report = await this.walk(this.db);
    if (!report.ok) this.options.onVerificationFailure?.();
    return report;
  }

  /**
   * A master-key rotation (docs/audit.md, "Master-key rotation"), inside the transaction that re-seals the API keys:
   * seals what is waiting and walks the chain under the current key (a trail that does not verify is not re-keyed:
   * that would bless what was changed), gives every record its MAC and digest under the next key, and records the
   * rotation, sealed. Answers how many records were re-keyed.
   */
  async rekey(transaction: Kysely<Database>, nextMaster: Buffer, rotation: AuditEvent): Promise<number> {
    await lockSealing(transaction, true);
    while ((await this.sealBatch(transaction)).length === SEAL_BATCH);
    const report = await this.walk(transaction);
    if (!report.ok) {
      throw new Error(
        `The audit trail does not verify (${report.problem?.reason ?? 'unknown problem'}); nothing was changed.`,
      );
    }
    const next = new AuditTrail({ ...this.options, masterKey: nextMaster });
    let previous = (await this.anchor(transaction)).digest;
    let afterSeq = report.firstSeq - 1;
    let count = 0;
    for (;;) {
      const rows = await sealedRecords(transaction, afterSeq, SEAL_BATCH);
      const rekeyed = rows.map((row) => {
        const mac = macOf(next.key, row);
        previous = digestOf(next.key, previous, row.chainseq!, mac);
        return { auditid: row.auditid, mac, digest: previous };
      });
      await rekeyRecords(transaction, rekeyed);
      count += rows.length;
      if (rows.length < SEAL_BATCH) break;
      afterSeq = rows[rows.length - 1]!.chainseq!;
    }
    await insertRecord(
      transaction,
      next.rowOf({ ...rotation, detail: { ...(rotation.detail as object), records: count } }),
    );
    await next.sealBatch(transaction);
    return count;
  }

  /**
   * Removes the sealed records older than the retention period (a prefix of the chain) and records that it did, in
   * one transaction: the record keeps where the chain starts now and the digest it continues from.
   */
  async sweep(): Promise<number> {
    await this.seal(true);
    const days = this.retentionDays();
    const cutoff = new Date(this.now() - days * DAY_MS);
    return this.db.transaction().execute(async (transaction) => {
      await lockSealing(transaction, true);
      const expired = await expiredPrefix(transaction, cutoff);
      if (!expired) return 0;
      const removed = await deleteThrough(transaction, expired.lastSeq);
      await this.record(transaction, {
        type: 'audit.retention',
        user: null,
        scheme: 'system',
        object: 'EASAUDIT',
        detail: {
          removed,
          retentionDays: days,
          before: cutoff.toISOString(),
          firstSeq: expired.lastSeq + 1,
          anchor: expired.lastDigest,
        },
      });
      return removed;
    });
  }

  /** Records written at `since` or later, oldest first, each as one JSON object (docs/audit.md, "Export"). */
  async *export(since: Date): AsyncGenerator<Record<string, unknown>> {
    let afterId = 0;
    for (;;) {
      const rows = await recordsSince(this.db, since, afterId, SEAL_BATCH);
      for (const row of rows) yield exported(row);
      if (rows.length < SEAL_BATCH) return;
      afterId = rows[rows.length - 1]!.auditid;
    }
  }

  private async walk(db: Kysely<Database>): Promise<VerificationReport> {
    const anchor = await this.anchor(db);
    let expected = anchor.firstSeq;
    let previous = anchor.digest;
    let checked = 0;
    let head: VerificationReport['head'] = null;
    const fail = (row: AuditRow | undefined, reason: string): VerificationReport => ({
      ok: false,
      checked,
      unsealed: 0,
      firstSeq: anchor.firstSeq,
      head,
      problem: { auditid: row?.auditid ?? null, chainseq: row?.chainseq ?? null, reason },
    });
    for (;;) {
      const rows = await sealedRecords(db, expected - 1, SEAL_BATCH);
      for (const row of rows) {
        const chainseq = row.chainseq!;
        if (chainseq !== expected) {
          return fail(
            row,
            chainseq > expected
              ? `record ${row.auditid} (position ${chainseq}) follows position ${expected - 1}: the record(s) between were removed`
              : `record ${row.auditid} is at position ${chainseq}, before the chain's start ${expected}`,
          );
        }
        if (!sameHex(row.mac, macOf(this.key, row))) {
          return fail(
            row,
            `record ${row.auditid} (position ${chainseq}) was altered: its content does not match its MAC`,
          );
        }
        const digest = digestOf(this.key, previous, chainseq, row.mac);
        if (!sameHex(row.digest, digest)) {
          return fail(
            row,
            `record ${row.auditid} (position ${chainseq}) does not follow the record before it: altered, or inserted out of order`,
          );
        }
        previous = digest;
        head = { chainseq, digest };
        expected += 1;
        checked += 1;
      }
      if (rows.length < SEAL_BATCH) break;
    }
    // Whatever is left unsealed after sealing carries a MAC the service did not make (or committed a moment ago).
    let unsealed = 0;
    let afterId = 0;
    for (;;) {
      const rows = await unsealedRecords(db, SEAL_BATCH, afterId);
      for (const row of rows) {
        if (!sameHex(row.mac, macOf(this.key, row))) {
          return fail(row, `record ${row.auditid} was not written by the service: its MAC is not valid`);
        }
        unsealed += 1;
      }
      if (rows.length < SEAL_BATCH) break;
      afterId = rows[rows.length - 1]!.auditid;
    }
    return { ok: true, checked, unsealed, firstSeq: anchor.firstSeq, head };
  }

  /** Where the chain starts: position 1 after the genesis digest, or where the latest retention sweep left it. */
  private async anchor(db: Kysely<Database>): Promise<{ firstSeq: number; digest: string }> {
    const sweep = await latestSweep(db);
    if (!sweep?.detail) return { firstSeq: 1, digest: GENESIS };
    const detail = JSON.parse(sweep.detail) as { firstSeq?: unknown; anchor?: unknown };
    if (typeof detail.firstSeq !== 'number' || typeof detail.anchor !== 'string') {
      return { firstSeq: 1, digest: GENESIS };
    }
    return { firstSeq: detail.firstSeq, digest: detail.anchor };
  }

  private announce(row: AuditRow): void {
    this.options.onSealed?.(row);
    this.options.log?.info({ audit: exported(row) }, 'audit record');
  }

  private scheduleSeal(): void {
    if (this.closed || this.sealTimer) return;
    this.sealTimer = setTimeout(() => {
      this.sealTimer = undefined;
      this.sealInBackground();
    }, SEAL_DELAY_MS).unref();
  }

  private sealInBackground(): void {
    if (this.closed) return;
    this.seal(false).catch((error: unknown) =>
      this.options.onBackgroundError?.(error, 'sealing audit records failed'),
    );
  }
}

/** A record as exported and logged: its columns, with the values read back as JSON. */
export function exported(row: AuditRow): Record<string, unknown> {
  return {
    auditid: row.auditid,
    eventtime: row.eventtime.toISOString(),
    eventtype: row.eventtype,
    outcome: row.outcome,
    userid: row.userid,
    authscheme: row.authscheme,
    keyid: row.keyid,
    sessiondigest: row.sessiondigest,
    clientaddr: row.clientaddr,
    requestid: row.requestid,
    servername: row.servername,
    objectname: row.objectname,
    objectkey: row.objectkey,
    before: parsed(row.beforevalue),
    after: parsed(row.aftervalue),
    detail: parsed(row.detail),
    chainseq: row.chainseq,
    digest: row.digest,
  };
}

function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function clip(value: string | null, length: number): string | null {
  return value === null ? null : value.slice(0, length);
}

/** A value as recorded: JSON, with the value of any field named like a credential replaced. */
function shown(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = JSON.stringify(value, (name, inner: unknown) =>
    name !== '' && (isCredentialName(name) || SECRET_NAME.test(name)) ? REDACTED : inner,
  );
  return text.length > MAX_VALUE_LENGTH ? `${text.slice(0, MAX_VALUE_LENGTH)}…` : text;
}
