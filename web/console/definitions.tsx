import { useState } from 'preact/hooks';
import { DefinitionForm } from './definition-form.js';
import { loadDefinitions, type StoredDefinition } from './definition-model.js';
import { ErrorMessage, Page, Status, useAction, useLoad, type PageProps } from './common.js';

type DefinitionAction = 'edit' | 'toggle' | 'reset' | 'delete';

/**
 * Package definitions (MXAPIDMPKGDEF, docs/migration.md "Package definitions"): made, changed and deleted through the
 * object structure; a CHANGE definition's listener switched on or off (`/dm/toggleactive`) and its history cleared
 * (`/dm/reset`).
 */
export function Definitions({ api }: PageProps) {
  const data = useLoad(() => loadDefinitions(api));
  const action = useAction();
  // The definition in the form (undefined: a new one); `run` makes a new form of a fresh draft each time.
  const [editing, setEditing] = useState<{ stored: StoredDefinition | undefined; run: number } | undefined>(
    undefined,
  );
  const done = async (text: string) => {
    await data.reload();
    return text;
  };
  const post = (path: string, pkgdefname: string) =>
    api.call<{ active?: boolean }>(`/oslc/dm/${path}`, { method: 'POST', body: { pkgdefname } });
  const actions: Record<DefinitionAction, (definition: StoredDefinition) => void> = {
    edit: (definition) => setEditing({ stored: definition, run: Date.now() }),
    toggle: (definition) =>
      void action.run(async () => {
        const answer = await post('toggleactive', definition.pkgdefname);
        return done(`Definition ${definition.pkgdefname} is ${answer.active ? 'active' : 'inactive'}.`);
      }),
    reset: (definition) =>
      void action.run(async () => {
        await post('reset', definition.pkgdefname);
        return done(`The tracked changes of ${definition.pkgdefname} were cleared.`);
      }),
    delete: (definition) =>
      void action.run(async () => {
        await api.call(`/${definition.href}`, { method: 'DELETE' });
        if (editing?.stored?.pkgdefname === definition.pkgdefname) setEditing(undefined);
        return done(`Definition ${definition.pkgdefname} was deleted.`);
      }),
  };
  const saved = async (text: string) => {
    setEditing(undefined);
    return done(text);
  };
  return (
    <Page title="Package definitions">
      <ErrorMessage error={data.error ?? action.error} />
      <Status text={action.message} />
      {editing === undefined ? (
        <button type="button" onClick={() => setEditing({ stored: undefined, run: Date.now() })}>
          New definition
        </button>
      ) : (
        data.data && (
          <DefinitionForm
            key={editing.run}
            api={api}
            stored={editing.stored}
            structures={data.data.structures}
            run={action.run}
            saved={saved}
          />
        )
      )}
      <DefinitionTable definitions={data.data?.definitions ?? []} busy={action.busy} actions={actions} />
    </Page>
  );
}

function DefinitionTable({
  definitions,
  busy,
  actions,
}: {
  definitions: StoredDefinition[];
  busy: boolean;
  actions: Record<DefinitionAction, (definition: StoredDefinition) => void>;
}) {
  return (
    <section aria-labelledby="definitions-title">
      <h2 id="definitions-title">Definitions</h2>
      {definitions.length === 0 && <p class="none">There is no package definition on this deployment.</p>}
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Object structures</th>
              <th scope="col">Targets</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {definitions.map((definition) => (
              <DefinitionRow
                key={definition.pkgdefname}
                definition={definition}
                busy={busy}
                actions={actions}
              />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function DefinitionRow({
  definition,
  busy,
  actions,
}: {
  definition: StoredDefinition;
  busy: boolean;
  actions: Record<DefinitionAction, (definition: StoredDefinition) => void>;
}) {
  const name = definition.pkgdefname;
  const button = (label: string, act: DefinitionAction) => (
    <button
      type="button"
      class="secondary"
      disabled={busy}
      onClick={() => actions[act](definition)}
      aria-label={`${label} definition ${name}`}
    >
      {label}
    </button>
  );
  const content = [...(definition.dmpkgdefcontent ?? [])].sort(
    (one, other) => (one.cfgdataorder ?? 0) - (other.cfgdataorder ?? 0),
  );
  const change = definition.type === 'CHANGE';
  return (
    <tr data-definition={name}>
      <td>
        <strong>{name}</strong> <small>{definition.description ?? ''}</small>
      </td>
      <td>{definition.type}</td>
      <td>
        {definition.status}
        {change ? (definition.active ? ', active' : ', inactive') : ''}
      </td>
      <td>
        <ul class="plain">
          {content.map((row) => (
            <li key={row.objectstructure}>
              {row.objectstructure}{' '}
              {row.whereclause ? <code>{row.whereclause}</code> : <small>all records</small>}
            </li>
          ))}
        </ul>
      </td>
      <td>
        {(definition.dmpkgdsttrgt ?? []).map((target) => `${target.targetname} (${target.type})`).join(', ')}
      </td>
      <td class="actions">
        <div class="actions">
          {button('Edit', 'edit')}
          {change && button(definition.active ? 'Deactivate' : 'Activate', 'toggle')}
          {change && button('Reset', 'reset')}
          {button('Delete', 'delete')}
        </div>
      </td>
    </tr>
  );
}
