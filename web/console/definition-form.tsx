import { useState } from 'preact/hooks';
import type { Api } from './api.js';
import {
  bodyOf,
  draftOf,
  draftProblem,
  newTarget,
  STATUSES,
  type ContentDraft,
  type DefinitionDraft,
  type StoredDefinition,
  type TargetDraft,
} from './definition-model.js';
import { whereProblem } from './where-check.js';

type Run = (action: () => Promise<string | undefined>) => Promise<void>;

/** Replaces the item at `index` of a list by `change` applied to it. */
function replaced<T>(list: T[], index: number, change: Partial<T>): T[] {
  return list.map((item, at) => (at === index ? { ...item, ...change } : item));
}

/**
 * A definition made or changed: name (new ones only), type, status, description, its content rows (an object
 * structure from the list, a where clause checked as it is typed) and its targets (a password written, never shown).
 */
export function DefinitionForm({
  api,
  stored,
  structures,
  run,
  saved,
}: {
  api: Api;
  stored: StoredDefinition | undefined;
  structures: string[];
  run: Run;
  saved: (text: string) => Promise<string>;
}) {
  const [draft, setDraft] = useState<DefinitionDraft>(() => draftOf(stored, structures));
  const change = (part: Partial<DefinitionDraft>) => setDraft({ ...draft, ...part });
  const problem = draftProblem(draft);
  const submit = (event: Event) => {
    event.preventDefault();
    if (problem) return;
    void run(async () => {
      const body = bodyOf(draft, stored === undefined);
      if (stored)
        await api.call(`/${stored.href}?lean=1`, {
          method: 'POST',
          body,
          headers: { 'x-method-override': 'PATCH' },
        });
      else await api.call('/oslc/os/mxapidmpkgdef?lean=1', { method: 'POST', body });
      const name = String(body.pkgdefname ?? stored?.pkgdefname);
      return saved(`Definition ${name} was ${stored ? 'saved' : 'created'}.`);
    });
  };
  return (
    <form class="definition" onSubmit={submit} aria-labelledby="definition-title">
      <h2 id="definition-title">{stored ? `Definition ${stored.pkgdefname}` : 'New definition'}</h2>
      <DefinitionFields draft={draft} creating={stored === undefined} change={change} />
      <ContentRows rows={draft.content} structures={structures} change={(content) => change({ content })} />
      <TargetRows rows={draft.targets} change={(targets) => change({ targets })} />
      <p class="hint" id="definition-problem">
        {problem ?? ''}
      </p>
      <button type="submit" disabled={problem !== undefined} aria-describedby="definition-problem">
        {stored ? 'Save definition' : 'Create definition'}
      </button>
    </form>
  );
}

function DefinitionFields({
  draft,
  creating,
  change,
}: {
  draft: DefinitionDraft;
  creating: boolean;
  change: (part: Partial<DefinitionDraft>) => void;
}) {
  return (
    <div class="fields">
      <span class="field">
        <label for="definition-name">Name</label>
        <input
          id="definition-name"
          value={draft.pkgdefname}
          maxLength={30}
          disabled={!creating}
          onInput={(event) => change({ pkgdefname: event.currentTarget.value.toUpperCase() })}
        />
      </span>
      <span class="field">
        <label for="definition-type">Type</label>
        <select
          id="definition-type"
          value={draft.type}
          onChange={(event) => change({ type: event.currentTarget.value as DefinitionDraft['type'] })}
        >
          <option value="SNAPSHOT">SNAPSHOT (records matching a where clause)</option>
          <option value="CHANGE">CHANGE (records written while active)</option>
        </select>
      </span>
      <span class="field">
        <label for="definition-status">Status</label>
        <select
          id="definition-status"
          value={draft.status}
          onChange={(event) => change({ status: event.currentTarget.value })}
        >
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </span>
      <span class="field">
        <label for="definition-description">Description</label>
        <input
          id="definition-description"
          value={draft.description}
          onInput={(event) => change({ description: event.currentTarget.value })}
        />
      </span>
    </div>
  );
}

/** The object structures in deploy order, each with its where clause and what the parser says of it. */
function ContentRows({
  rows,
  structures,
  change,
}: {
  rows: ContentDraft[];
  structures: string[];
  change: (rows: ContentDraft[]) => void;
}) {
  return (
    <fieldset>
      <legend>Object structures, in deploy order</legend>
      <ol class="rows">
        {rows.map((row, index) => (
          <ContentRow
            key={index}
            row={row}
            index={index}
            structures={structures}
            change={(part) => change(replaced(rows, index, part))}
            remove={() => change(rows.filter((_row, at) => at !== index))}
          />
        ))}
      </ol>
      <button
        type="button"
        class="secondary"
        onClick={() => change([...rows, { objectstructure: structures[0] ?? '', whereclause: '' }])}
      >
        Add object structure
      </button>
    </fieldset>
  );
}

function ContentRow({
  row,
  index,
  structures,
  change,
  remove,
}: {
  row: ContentDraft;
  index: number;
  structures: string[];
  change: (part: Partial<ContentDraft>) => void;
  remove: () => void;
}) {
  const problem = whereProblem(row.whereclause);
  const number = index + 1;
  return (
    <li data-content-row={number}>
      <span class="field">
        <label for={`content-os-${number}`}>Object structure {number}</label>
        <select
          id={`content-os-${number}`}
          value={row.objectstructure}
          onChange={(event) => change({ objectstructure: event.currentTarget.value })}
        >
          {/* A stored structure this user may no longer read stays shown. */}
          {[...new Set([row.objectstructure, ...structures])].filter(Boolean).map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </span>
      <span class="field wide">
        <label for={`content-where-${number}`}>Where clause {number}</label>
        <input
          id={`content-where-${number}`}
          class="code"
          value={row.whereclause}
          placeholder='siteid="BEDFORD" (blank: all records)'
          aria-invalid={problem !== undefined}
          aria-describedby={`content-check-${number}`}
          onInput={(event) => change({ whereclause: event.currentTarget.value })}
        />
      </span>
      <button
        type="button"
        class="secondary"
        onClick={remove}
        aria-label={`Remove object structure ${number}`}
      >
        Remove
      </button>
      <p id={`content-check-${number}`} class={problem ? 'error check' : 'check'} aria-live="polite">
        {problem ?? (row.whereclause.trim() === '' ? 'All records.' : 'The where clause parses.')}
      </p>
    </li>
  );
}

/** Where packages of the definition go: FILE (downloaded) or DATABASE (the target's database, by URL). */
function TargetRows({ rows, change }: { rows: TargetDraft[]; change: (rows: TargetDraft[]) => void }) {
  return (
    <fieldset>
      <legend>Targets</legend>
      <ol class="rows">
        {rows.map((row, index) => (
          <TargetRow
            key={index}
            row={row}
            number={index + 1}
            change={(part) => change(replaced(rows, index, part))}
            remove={() => change(rows.filter((_row, at) => at !== index))}
          />
        ))}
      </ol>
      <button
        type="button"
        class="secondary"
        onClick={() => change([...rows, { ...newTarget(), targetname: `FILE${rows.length + 1}` }])}
      >
        Add target
      </button>
    </fieldset>
  );
}

function TargetRow({
  row,
  number,
  change,
  remove,
}: {
  row: TargetDraft;
  number: number;
  change: (part: Partial<TargetDraft>) => void;
  remove: () => void;
}) {
  const text = (name: keyof TargetDraft, label: string, type = 'text') => (
    <span class="field">
      <label for={`target-${name}-${number}`}>
        {label} {number}
      </label>
      <input
        id={`target-${name}-${number}`}
        type={type}
        value={row[name]}
        autoComplete={type === 'password' ? 'new-password' : 'off'}
        placeholder={type === 'password' ? 'unchanged' : undefined}
        onInput={(event) => change({ [name]: event.currentTarget.value })}
      />
    </span>
  );
  return (
    <li data-target-row={number}>
      {text('targetname', 'Target name')}
      <span class="field">
        <label for={`target-type-${number}`}>Target type {number}</label>
        <select
          id={`target-type-${number}`}
          value={row.type}
          onChange={(event) => change({ type: event.currentTarget.value as TargetDraft['type'] })}
        >
          <option value="FILE">FILE (download)</option>
          <option value="DATABASE">DATABASE (sent to its database)</option>
        </select>
      </span>
      {row.type === 'DATABASE' && (
        <>
          {text('url', 'Database URL')}
          {text('schemaname', 'Schema')}
          {text('username', 'User')}
          {text('password', 'Password', 'password')}
        </>
      )}
      <button type="button" class="secondary" onClick={remove} aria-label={`Remove target ${number}`}>
        Remove
      </button>
    </li>
  );
}
