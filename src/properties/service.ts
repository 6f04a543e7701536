import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { UserProfile } from '../auth/types.js';
import { EVERYTHING_CHANGED } from '../db/change-bus.js';
import type { Storage } from '../db/database.js';
import type { DomainCache, DomainSnapshot } from '../domains/domain-cache.js';
import { errors } from '../errors.js';
import type { MetadataRegistry } from '../metadata/registry.js';
import { formatDate } from '../oslc/values.js';
import { propertyAuditEvent, type AuditRecorder } from '../audit/events.js';
import type { RequestOrigin } from '../audit/types.js';
import type { WriteRules } from '../oslc/write-extensions.js';
import {
  findValue,
  insertDefinition,
  insertHistory,
  loadApplied,
  loadDefinitions,
  loadHistory,
  loadValues,
  lockDefinition,
  saveApplied,
  saveValue,
  type AppliedRow,
  type DefinitionRow,
  type ValueRow,
} from './repository.js';
import type { Database } from '../db/schema.js';
import {
  COMMON,
  atRest,
  effectiveValue,
  isSecure,
  serverNameOf,
  validate,
  valueOf,
  type SentValue,
} from './values.js';

export { COMMON, type PropertyType } from './values.js';

/** What a caller who is not an administrator reads instead of a secure (masked or encrypted) value. */
export const MASKED_VALUE = '********';

/** Bus channel of property changes; the payload is the property name as registered. */
export const PROPERTY_CHANNEL = 'property';

/** Page-size limit when neither `mxe.oslc.<os>.maxpagesize` nor `mxe.oslc.maxpagesize` has a usable value. */
export const DEFAULT_MAX_PAGE_SIZE = 1000;

const HISTORY_LIMIT = 500;

/**
 * `mxe.oslc.<os>.maxpagesize`: a family of INTEGER properties, one per object structure (docs/properties.md). A
 * member is registered on its first set, under the structure's own name (an alias names the same property), so
 * object structures added later need no migration.
 */
const PAGE_SIZE_FAMILY = /^mxe\.oslc\.([^.]+)\.maxpagesize$/i;

export interface SetPropertyInput {
  propName: string;
  serverName?: string | undefined;
  propValue?: SentValue;
}

/** The documented setProperty answer (docs/properties.md). */
export interface SetPropertyResult {
  propName: string;
  serverName: string;
  propValue: string | null;
  oldValue: string | null;
  liveRefresh: boolean;
  /** The property does not refresh live: the stored value takes effect when each server process restarts. */
  restartRequired: boolean;
}

/** One entry of the registry read (`wsmethod:describeProperty`), in MAXPROP's own attribute names. */
export interface PropertyDescription extends DefinitionRow {
  maxpropvalue: Array<{
    servername: string;
    propvalue: string | null;
    changeby: string | null;
    changedate: string | null;
  }>;
  /** Per server process: the value it applied and when, and whether a stored value waits for its restart. */
  maxpropapplied: Array<{
    servername: string;
    propvalue: string | null;
    appliedat: string;
    storedvalue: string | null;
    pending: boolean;
  }>;
}

/** Sets inside a caller's transaction (see `PropertyService.prepareSets`). */
export interface PropertySets {
  /** Sets one value in the transaction; answers whether it changed anything. */
  set(transaction: Kysely<Database>, input: SetPropertyInput): Promise<boolean>;
  /** Applies the changed values in this process, once the transaction has committed. */
  refresh(): Promise<void>;
}

export interface PropertyHistoryEntry {
  propname: string;
  servername: string;
  oldvalue: string | null;
  newvalue: string | null;
  changeby: string;
  changedate: string;
}

export interface PropertyServiceOptions {
  /** This process's server name (EAS_SERVER_NAME): the values stored for it win over COMMON. */
  serverName: string;
  metadata: MetadataRegistry;
  domains: DomainCache;
  /** Key that seals the values of encrypted properties (EAS_SECRET_KEY); without it they cannot be set. */
  secretKey?: string | undefined;
  log?: Pick<FastifyBaseLogger, 'warn' | 'error'>;
  audit?: AuditRecorder;
}

interface PropertyState {
  definition: DefinitionRow;
  /** Stored values by server name, in clear; null is a value stored as empty. */
  values: Map<string, string | null>;
  /** The value this process uses, answered by `get`, and when it took it. */
  applied: string | null;
  appliedAt: Date;
}

/**
 * System properties: the registry and values in the database, and in memory the value this process applies for
 * each, so that `get` is a map lookup (it runs on hot paths: page-size limits, API-key rules).
 *
 * A set writes the value, its history row and a bus notification in one transaction. Every process, the writer
 * included, then reloads that property: a property that refreshes live takes its new value at once; one that does
 * not keeps the value it started with, and the registry read reports the stored one as pending until the process
 * restarts. Each process records the value it applied and when (maxpropapplied), the acknowledgement of a refresh.
 */
export class PropertyService {
  private readonly db: Kysely<Database>;
  private readonly serverName: string;
  private readonly key: Buffer | undefined;
  private readonly states = new Map<string, PropertyState>();
  private readonly byLowerName = new Map<string, PropertyState>();
  /** Reloads run one at a time, in order; a name waiting in the queue is not queued twice. */
  private queue: Promise<void> = Promise.resolve();
  private readonly waiting = new Map<string, Promise<void>>();
  private closed = false;

  constructor(
    private readonly storage: Storage,
    private readonly options: PropertyServiceOptions,
  ) {
    this.db = storage.db;
    this.serverName = options.serverName;
    this.key =
      options.secretKey === undefined ? undefined : createHash('sha256').update(options.secretKey).digest();
  }

  /** Loads every property and applies its value, then follows the changes other processes make. */
  async start(): Promise<void> {
    await this.storage.bus.listen(PROPERTY_CHANNEL, (name) => {
      // After a lost listening connection any property may have changed unheard: reload them all.
      if (name === EVERYTHING_CHANGED) void this.enqueue(() => this.reloadAll());
      else void this.refresh(name);
    });
    await this.enqueue(() => this.reloadAll());
  }

  /** Stops following changes; waits for a reload under way so that nothing touches a closing database. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
  }

  /** The value this process applies, or undefined for an unknown property or one without a value. */
  get(name: string): string | undefined {
    const state = this.states.get(name) ?? this.byLowerName.get(name.toLowerCase());
    return state?.applied ?? undefined;
  }

  /** An INTEGER property's value as a number; undefined when it has no value. */
  getInteger(name: string): number | undefined {
    const value = this.get(name);
    return value === undefined ? undefined : Number(value);
  }

  /** A YORN property's value as a boolean; undefined when it has no value. */
  getFlag(name: string): boolean | undefined {
    const value = this.get(name);
    return value === undefined ? undefined : value === '1';
  }

  /** The largest `oslc.pageSize` on an object structure: its own property, else the global one. */
  maxPageSize(osName?: string): number {
    const structure = osName === undefined ? undefined : this.options.metadata.findObjectStructure(osName);
    const own = structure && this.getInteger(`mxe.oslc.${structure.name.toLowerCase()}.maxpagesize`);
    return own ?? this.getInteger('mxe.oslc.maxpagesize') ?? DEFAULT_MAX_PAGE_SIZE;
  }

  /** The value a caller reads (getProperty): the applied value as a string, masked for non-administrators. */
  read(name: string, user: UserProfile): string {
    const state = this.find(name);
    if (!state) {
      if (this.familyMember(name)) return '';
      throw errors.unknownProperty(name);
    }
    if (!user.isAdmin && isSecure(state.definition)) return MASKED_VALUE;
    return state.applied ?? '';
  }

  /** Validates, stores and records one value, then refreshes it in this process before answering. */
  async set(input: SetPropertyInput, user: UserProfile, origin?: RequestOrigin): Promise<SetPropertyResult> {
    if (!user.isAdmin) throw errors.actionNotAllowed('wsmethod:setProperty', 'MAXPROP');
    // Read before the transaction: on the embedded engine a transaction holds the only connection.
    const domains = await this.options.domains.snapshot();
    const { changed: _changed, ...result } = await this.db
      .transaction()
      .execute((transaction) => this.store(transaction, input, { user, origin }, domains, false));
    await this.refreshAfterCommit([result.propName]);
    return result;
  }

  /**
   * Sets of several values inside a caller's transaction (a migration package's deploy, docs/migration.md), with
   * every rule of `set`. Prepared before the transaction opens; once it commits, `refresh()` applies the values in
   * this process (the others hear the notifications the sets sent inside it). A value equal to the stored one is
   * left alone: deploying a package twice records nothing twice.
   */
  async prepareSets(user: UserProfile, origin?: RequestOrigin): Promise<PropertySets> {
    if (!user.isAdmin) throw errors.actionNotAllowed('wsmethod:setProperty', 'MAXPROP');
    const domains = await this.options.domains.snapshot();
    const names = new Set<string>();
    return {
      set: async (transaction, input) => {
        const result = await this.store(transaction, input, { user, origin }, domains, true);
        if (result.changed) names.add(result.propName);
        return result.changed;
      },
      refresh: () => this.refreshAfterCommit([...names]),
    };
  }

  /** The write rules of MAXPROP and MAXPROPVALUE: read through MXAPIPROPERTY, set only by setProperty. */
  readonly writeRules: WriteRules = {
    beforeInsert: ({ object }) => Promise.reject(errors.actionNotAllowed('insert', object.name)),
    beforeUpdate: ({ object }) => Promise.reject(errors.actionNotAllowed('update', object.name)),
    beforeDelete: ({ object }) => Promise.reject(errors.actionNotAllowed('delete', object.name)),
  };

  /** Checks, stores and records one value and announces it on the bus, all in the given transaction. */
  private async store(
    transaction: Kysely<Database>,
    input: SetPropertyInput,
    { user, origin }: { user: UserProfile; origin: RequestOrigin | undefined },
    domains: DomainSnapshot,
    unchangedLeft: boolean,
  ): Promise<SetPropertyResult & { changed: boolean }> {
    const family = this.familyMember(input.propName);
    const name = this.find(input.propName)?.definition.propname ?? family?.propname;
    if (name === undefined) throw errors.unknownProperty(input.propName);
    const serverName = serverNameOf(input.serverName);
    const value = valueOf(input.propValue);
    const now = new Date();
    let definition = await lockDefinition(transaction, name);
    if (!definition && family) {
      await insertDefinition(transaction, family, user.userid);
      definition = await lockDefinition(transaction, name);
    }
    if (!definition) throw errors.unknownProperty(input.propName);
    const previous = await findValue(transaction, name, serverName);
    const storedBefore = previous ? (this.clearValue(previous) ?? null) : null;
    const result = {
      propName: name,
      serverName,
      oldValue: previous ? storedBefore : await this.inheritedValue(transaction, definition, serverName),
      liveRefresh: definition.liverefresh,
      restartRequired: !definition.liverefresh,
    };
    // Checked before the rules: a value already stored is no change, even of a property not changeable online.
    if (unchangedLeft && previous && storedBefore === value)
      return { ...result, propValue: value, changed: false };
    const stored = validate(definition, serverName, value, domains);
    if (unchangedLeft && previous && storedBefore === stored)
      return { ...result, propValue: stored, changed: false };
    const sealed = definition.encrypted ? this.seal(definition.propname, stored) : stored;
    const change = { propname: name, servername: serverName, changeby: user.userid, changedate: now };
    await saveValue(transaction, {
      ...change,
      propvalue: definition.encrypted ? null : sealed,
      encryptedvalue: definition.encrypted ? sealed : null,
    });
    // The audit record rides on the history row's statement (src/audit/README.md, "Recording").
    const record = this.options.audit?.recordOf({
      ...propertyAuditEvent(definition, result, stored),
      origin,
    });
    const history = { ...change, oldvalue: previous ? atRest(previous) : null, newvalue: sealed };
    await insertHistory(transaction, history, record);
    await this.storage.bus.notify<Database>(transaction, PROPERTY_CHANNEL, name);
    return { ...result, propValue: stored, changed: true };
  }

  /**
   * The value a server name had before its first own value: COMMON's for a server (unless the property is
   * instance-only), else the default (docs/properties.md, `oldValue`).
   */
  private async inheritedValue(
    transaction: Kysely<Database>,
    definition: DefinitionRow,
    serverName: string,
  ): Promise<string | null> {
    if (serverName !== COMMON && !definition.instanceonly) {
      const common = await findValue(transaction, definition.propname, COMMON);
      if (common) return this.clearValue(common) ?? null;
    }
    return definition.maximodefault;
  }

  /** After a commit of sets: this process applies them, and the other listeners of this process hear them. */
  private async refreshAfterCommit(names: readonly string[]): Promise<void> {
    for (const name of names) {
      await this.refresh(name);
      this.storage.bus.deliverLocally(PROPERTY_CHANNEL, name);
    }
  }

  /** The registry read for administrators: definitions, stored values, and what each server applied. */
  async describe(names?: readonly string[]): Promise<PropertyDescription[]> {
    const templates = new Map<string, DefinitionRow>();
    let registered: string[] | undefined;
    if (names) {
      registered = [];
      for (const name of names) {
        const state = this.find(name);
        const family = state ? undefined : this.familyMember(name);
        if (state) registered.push(state.definition.propname);
        else if (family) templates.set(family.propname, family);
        else throw errors.unknownProperty(name);
      }
      registered.push(...templates.keys());
    }
    const definitions = await loadDefinitions(this.db, registered);
    const values = await loadValues(this.db, registered);
    const applied = await loadApplied(this.db, registered ?? definitions.map((row) => row.propname));
    for (const row of definitions) templates.delete(row.propname);
    const all = [...definitions, ...templates.values()];
    return all
      .sort((a, b) => a.propname.localeCompare(b.propname))
      .map((definition) => this.description(definition, values, applied));
  }

  /** Changes of one property, newest first (at most the last 500). */
  async history(name: string): Promise<PropertyHistoryEntry[]> {
    const registered = this.find(name)?.definition ?? this.familyMember(name);
    if (!registered) throw errors.unknownProperty(name);
    const rows = await loadHistory(this.db, registered.propname, HISTORY_LIMIT);
    return rows.map((row) => ({
      propname: row.propname,
      servername: row.servername,
      oldvalue: registered.encrypted ? this.open(row.oldvalue) : row.oldvalue,
      newvalue: registered.encrypted ? this.open(row.newvalue) : row.newvalue,
      changeby: row.changeby,
      changedate: formatDate(row.changedate),
    }));
  }

  /** Resolves when every reload queued so far has run (tests and shutdown wait on it). */
  settled(): Promise<void> {
    return this.queue;
  }

  /** Queues a reload of one property; a reload already waiting for the same name is shared. */
  private refresh(name: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    const waiting = this.waiting.get(name);
    if (waiting) return waiting;
    const run = this.enqueue(async () => {
      // Leaves the waiting list as it starts: a notification arriving during this reload queues another.
      this.waiting.delete(name);
      await this.reload(name);
    });
    this.waiting.set(name, run);
    return run;
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.closed) return;
      try {
        await work();
      } catch (error) {
        this.options.log?.error({ err: error }, 'system property refresh failed');
      }
    });
    this.queue = run;
    return run;
  }

  /** Loads every property: at start (everything applies), and after notifications may have been missed. */
  private async reloadAll(): Promise<void> {
    const definitions = await loadDefinitions(this.db);
    const values = await loadValues(this.db);
    const now = new Date();
    const changed: PropertyState[] = [];
    const present = new Set<string>();
    for (const definition of definitions) {
      const previous = this.states.get(definition.propname);
      const state = this.stateOf(definition, values, previous, now);
      this.put(state);
      present.add(definition.propname);
      if (!previous || state.appliedAt !== previous.appliedAt) changed.push(state);
    }
    for (const state of [...this.states.values()]) {
      if (!present.has(state.definition.propname)) this.remove(state);
    }
    await saveApplied(
      this.db,
      changed.map((state) => this.appliedRow(state)),
    );
  }

  private async reload(name: string): Promise<void> {
    const [definition] = await loadDefinitions(this.db, [name]);
    const previous = this.states.get(name);
    if (!definition) {
      if (previous) this.remove(previous);
      return;
    }
    const values = await loadValues(this.db, [name]);
    const state = this.stateOf(definition, values, previous, new Date());
    this.put(state);
    if (!previous || state.appliedAt !== previous.appliedAt) {
      await saveApplied(this.db, [this.appliedRow(state)]);
    }
  }

  /**
   * The state of a property after a load: a new property, or one that refreshes live, applies its current value;
   * one that does not keeps the value applied at start (a restart applies the stored one).
   */
  private stateOf(
    definition: DefinitionRow,
    rows: readonly ValueRow[],
    previous: PropertyState | undefined,
    now: Date,
  ): PropertyState {
    const values = new Map<string, string | null>();
    for (const row of rows) {
      if (row.propname !== definition.propname) continue;
      const value = this.clearValue(row);
      if (value !== undefined) values.set(row.servername, value);
    }
    const current = effectiveValue(definition, values, this.serverName);
    if (previous && (!definition.liverefresh || previous.applied === current)) {
      return { definition, values, applied: previous.applied, appliedAt: previous.appliedAt };
    }
    return { definition, values, applied: current, appliedAt: now };
  }

  private put(state: PropertyState): void {
    this.states.set(state.definition.propname, state);
    this.byLowerName.set(state.definition.propname.toLowerCase(), state);
  }

  private remove(state: PropertyState): void {
    this.states.delete(state.definition.propname);
    this.byLowerName.delete(state.definition.propname.toLowerCase());
  }

  private appliedRow(state: PropertyState): AppliedRow {
    return {
      servername: this.serverName,
      propname: state.definition.propname,
      // Without the key an encrypted value cannot be recorded sealed; nothing is recorded in clear instead.
      propvalue: !state.definition.encrypted
        ? state.applied
        : this.key
          ? this.seal(state.definition.propname, state.applied)
          : null,
      appliedat: state.appliedAt,
    };
  }

  /** A registered property by name in any case, or a family member by its object structure's name or alias. */
  private find(name: string): PropertyState | undefined {
    const state = this.states.get(name) ?? this.byLowerName.get(name.toLowerCase());
    if (state) return state;
    const family = this.familyMember(name);
    return family && this.states.get(family.propname);
  }

  private familyMember(name: string): DefinitionRow | undefined {
    const match = PAGE_SIZE_FAMILY.exec(name);
    const structure = match && this.options.metadata.findObjectStructure(match[1]!);
    if (!structure) return undefined;
    return {
      propname: `mxe.oslc.${structure.name.toLowerCase()}.maxpagesize`,
      description: `Largest page size a collection query on ${structure.name} may ask for; without a value, mxe.oslc.maxpagesize applies`,
      maxtype: 'INTEGER',
      domainid: null,
      rangemin: 1,
      rangemax: null,
      maximodefault: null,
      globalonly: false,
      instanceonly: false,
      liverefresh: true,
      onlinechanges: true,
      encrypted: false,
      masked: false,
      nullsallowed: true,
      userdefined: false,
    };
  }

  private description(
    definition: DefinitionRow,
    values: readonly ValueRow[],
    applied: readonly AppliedRow[],
  ): PropertyDescription {
    const own = values.filter((row) => row.propname === definition.propname);
    const clear = new Map<string, string | null>();
    for (const row of own) {
      const value = this.clearValue(row);
      if (value !== undefined) clear.set(row.servername, value);
    }
    const reveal = (value: string | null) => (definition.encrypted ? this.open(value) : value);
    return {
      ...definition,
      maxpropvalue: own
        .sort((a, b) => a.servername.localeCompare(b.servername))
        .map((row) => ({
          servername: row.servername,
          propvalue: reveal(atRest(row)),
          changeby: row.changeby,
          changedate: row.changedate ? formatDate(row.changedate) : null,
        })),
      maxpropapplied: applied
        .filter((row) => row.propname === definition.propname)
        .map((row) => {
          const storedvalue = effectiveValue(definition, clear, row.servername);
          const propvalue = reveal(row.propvalue);
          return {
            servername: row.servername,
            propvalue,
            appliedat: formatDate(row.appliedat),
            storedvalue,
            pending: storedvalue !== propvalue,
          };
        }),
    };
  }

  /** A stored value in clear; undefined when an encrypted value cannot be opened (no key, or another key). */
  private clearValue(row: ValueRow): string | null | undefined {
    if (row.encryptedvalue === null) return row.propvalue;
    const value = this.tryOpen(row.encryptedvalue);
    if (value === undefined) {
      this.options.log?.warn(
        { propname: row.propname, servername: row.servername },
        'encrypted system property value cannot be read with the configured EAS_SECRET_KEY',
      );
    }
    return value;
  }

  /** For administrators' reads: a sealed value in clear, or the mask when it cannot be opened. */
  private open(sealed: string | null): string | null {
    if (sealed === null) return null;
    return this.tryOpen(sealed) ?? MASKED_VALUE;
  }

  /** AES-256-GCM, stored as `v1:<iv>:<tag>:<ciphertext>` in base64. */
  private seal(name: string, value: string | null): string | null {
    if (value === null) return null;
    if (!this.key) throw errors.propertySecretKeyMissing(name);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const text = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return ['v1', ...[iv, cipher.getAuthTag(), text].map((part) => part.toString('base64'))].join(':');
  }

  private tryOpen(sealed: string): string | undefined {
    const [version, iv, tag, text] = sealed.split(':');
    if (!this.key || version !== 'v1' || !iv || !tag || text === undefined) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(text, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
