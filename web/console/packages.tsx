import { useState } from 'preact/hooks';
import type { Api } from './api.js';
import { ErrorMessage, formatDate, Page, Status, useAction, useLoad, type PageProps } from './common.js';
import { DeployFlow, type FlowKind } from './deploy-flow.js';
import { Preview, type PreviewAnswer } from './preview.js';

interface Definition {
  pkgdefname: string;
  type: string;
  status: string;
  description?: string;
}

export interface PackageRecord {
  dmpackageid: number;
  pkgdefname: string;
  /** The deployment that created the package (docs/migration.md, "Source"). */
  source?: string;
  package?: string;
  status: string;
  statusdate?: string;
  createby?: string;
  createdate?: string;
  progressstatus?: string;
  distributionmessage?: string;
  /** SNAPSHOT, CHANGE, or INVERSE: the back-out package a deploy captured (docs/migration.md, "Back-out"). */
  type?: string;
  /** SOURCE: made here; TARGET: received here. */
  side?: string;
  /** The deployed package a back-out package undoes. */
  inverseof?: number | null;
}

export type PackageAction =
  'distribute' | 'download' | 'preview' | 'deploy' | 'backoutpreview' | 'backout' | 'close';

/** A package's kind as the page shows it: a back-out package, or a package of a SNAPSHOT or CHANGE definition. */
export function kindOf(record: PackageRecord): string {
  if (record.type === 'INVERSE' || (record.inverseof ?? null) !== null) return 'Back-out';
  return `Package${record.type ? ` (${record.type})` : ''}`;
}

/**
 * The actions a package's status allows (docs/migration.md, "Statuses"): a package made here is distributed and
 * downloaded while CREATED; a received one is previewed and deployed until it is DEPLOYED, then backed out; a
 * back-out package is only downloaded (it is applied through the Back-out of the package it undoes). Work under way
 * allows nothing; CLOSED nothing.
 */
export function actionsOf(record: PackageRecord): PackageAction[] {
  if (kindOf(record) === 'Back-out') return record.status === 'CREATED' ? ['download'] : [];
  switch (record.status) {
    case 'CREATED':
      return ['distribute', 'download', 'close'];
    case 'CREATE_ERROR':
      return ['close'];
    case 'DEPLOY_NEW':
    case 'DEPLOY_ERROR':
      return ['preview', 'deploy', 'close'];
    case 'DEPLOYED':
      return ['backoutpreview', 'backout', 'close'];
    case 'BACKEDOUT':
      return ['close'];
    default:
      return [];
  }
}

const loadAll = async (api: Api) => {
  const [definitions, packages] = await Promise.all([
    api.members('mxapidmpkgdef', 'oslc.select=pkgdefname,type,status,description&oslc.orderBy=%2Bpkgdefname'),
    api.members('mxapidmpackage', 'oslc.select=*&oslc.orderBy=-dmpackageid'),
  ]);
  return {
    definitions: definitions as unknown as Definition[],
    packages: packages as unknown as PackageRecord[],
  };
};

/** Definitions and packages (docs/migration.md): create, distribute, download, upload, preview, deploy, back out, close. */
export function Packages({ api }: PageProps) {
  const data = useLoad(() => loadAll(api));
  const action = useAction();
  const [preview, setPreview] = useState<{ answer: PreviewAnswer; backout: boolean } | undefined>(undefined);
  const [flow, setFlow] = useState<{ record: PackageRecord; kind: FlowKind; run: number } | undefined>(
    undefined,
  );
  const post = (path: string, body: unknown) =>
    api.call<Record<string, unknown>>(`/oslc/dm/${path}`, { method: 'POST', body });
  const done = async (text: string) => {
    await data.reload();
    return text;
  };
  const ref = (record: PackageRecord) => ({ pkgdefname: record.pkgdefname, dmpackageid: record.dmpackageid });
  const previewOf = (record: PackageRecord, backout: boolean) =>
    void action.run(async () => {
      const answer = (await post('preview', {
        ...ref(record),
        ...(backout && { backout: true }),
      })) as unknown;
      setPreview({ answer: answer as PreviewAnswer, backout });
      return `Preview of ${backout ? 'the back-out of ' : ''}package ${record.dmpackageid}: nothing was written.`;
    });
  // A flow shows its own steps: the last preview and its "nothing was written" would read as the deploy's outcome.
  const start = (record: PackageRecord, kind: FlowKind) => {
    setPreview(undefined);
    action.clear();
    setFlow({ record, kind, run: Date.now() });
  };
  const actions: PackageActions = {
    distribute: (record) =>
      void action.run(async () => {
        const answer = await post('distribute', ref(record));
        return done(String(answer.distributionmessage ?? `Package ${record.dmpackageid} was distributed.`));
      }),
    preview: (record) => previewOf(record, false),
    deploy: (record) => start(record, 'deploy'),
    backoutpreview: (record) => previewOf(record, true),
    backout: (record) => start(record, 'backout'),
    close: (record) =>
      void action.run(async () => {
        await post('close', ref(record));
        return done(`Package ${record.dmpackageid} was closed.`);
      }),
  };
  return (
    <Page title="Packages">
      <ErrorMessage error={data.error ?? action.error} />
      <Status text={action.message} />
      {flow && (
        <DeployFlow
          key={flow.run}
          api={api}
          record={flow.record}
          kind={flow.kind}
          ended={() => void data.reload()}
        />
      )}
      {preview && <Preview answer={preview.answer} backout={preview.backout} />}
      {data.data && (
        <CreatePackage api={api} definitions={data.data.definitions} run={action.run} done={done} />
      )}
      <UploadPackage api={api} run={action.run} done={done} />
      <PackageTable api={api} packages={data.data?.packages ?? []} busy={action.busy} actions={actions} />
      <DefinitionTable definitions={data.data?.definitions ?? []} />
    </Page>
  );
}

type PackageActions = Record<Exclude<PackageAction, 'download'>, (record: PackageRecord) => void>;

type Run = (action: () => Promise<string | undefined>) => Promise<void>;

/**
 * Create: the definition shown selected is the one created (the first until another is chosen); without any
 * definition there is nothing to create, and the page says where one is made.
 */
function CreatePackage({
  api,
  definitions,
  run,
  done,
}: {
  api: Api;
  definitions: Definition[];
  run: Run;
  done: (text: string) => Promise<string>;
}) {
  const [chosen, setChosen] = useState('');
  const [readme, setReadme] = useState('');
  const selected = definitions.some((definition) => definition.pkgdefname === chosen)
    ? chosen
    : (definitions[0]?.pkgdefname ?? '');
  const submit = (event: Event) => {
    event.preventDefault();
    if (selected === '') return;
    void run(async () => {
      const record = await api.call<PackageRecord>('/oslc/dm/create', {
        method: 'POST',
        body: { pkgdefname: selected, readme },
      });
      return done(`Package ${record.dmpackageid} of ${record.pkgdefname} was created.`);
    });
  };
  // Definitions are made on the console's own page (MXAPIDMPKGDEF, docs/console.md "Package definitions").
  const definitionsPage = `${api.base}/console/definitions`;
  return (
    <form class="inline" onSubmit={submit} aria-labelledby="create-title">
      <h2 id="create-title">Create a package</h2>
      {definitions.length === 0 ? (
        <p class="none" id="create-none">
          There is no package definition on this deployment, so there is nothing to create a package of.{' '}
          <a href={definitionsPage}>Make a definition</a> on the Package definitions page.
        </p>
      ) : (
        <>
          <span class="field">
            <label for="create-definition">Definition</label>
            <select
              id="create-definition"
              value={selected}
              onChange={(event) => setChosen(event.currentTarget.value)}
            >
              {definitions.map((definition) => (
                <option key={definition.pkgdefname} value={definition.pkgdefname}>
                  {definition.pkgdefname} ({definition.type})
                </option>
              ))}
            </select>
          </span>
          <span class="field">
            <label for="create-readme">Read-me</label>
            <input
              id="create-readme"
              value={readme}
              onInput={(event) => setReadme(event.currentTarget.value)}
            />
          </span>
        </>
      )}
      <button
        type="submit"
        disabled={selected === ''}
        aria-describedby={definitions.length === 0 ? 'create-none' : undefined}
      >
        Create
      </button>
    </form>
  );
}

function UploadPackage({ api, run, done }: { api: Api; run: Run; done: (text: string) => Promise<string> }) {
  const [file, setFile] = useState<File | undefined>(undefined);
  const submit = (event: Event) => {
    event.preventDefault();
    if (!file) return;
    void run(async () => {
      const record = await api.call<PackageRecord>(
        `/oslc/dm/upload?filename=${encodeURIComponent(file.name)}`,
        {
          method: 'POST',
          file: { data: file, contentType: 'application/zip' },
        },
      );
      return done(
        `Package file ${file.name} was received as package ${record.dmpackageid} (${record.status}).`,
      );
    });
  };
  return (
    <form class="inline" onSubmit={submit} aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a package file</h2>
      <label for="upload-file">Package file (.zip)</label>
      <input
        id="upload-file"
        type="file"
        accept=".zip,application/zip"
        onChange={(event) => setFile(event.currentTarget.files?.[0])}
      />
      <button type="submit" disabled={!file}>
        Upload
      </button>
    </form>
  );
}

const ACTION_LABELS: Record<Exclude<PackageAction, 'download'>, string> = {
  distribute: 'Distribute',
  preview: 'Preview',
  deploy: 'Deploy',
  backoutpreview: 'Preview back-out',
  backout: 'Back out',
  close: 'Close',
};

function PackageTable({
  api,
  packages,
  busy,
  actions,
}: {
  api: Api;
  packages: PackageRecord[];
  busy: boolean;
  actions: PackageActions;
}) {
  return (
    <section aria-labelledby="packages-title">
      <h2 id="packages-title">Packages</h2>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Definition</th>
              <th scope="col">Kind</th>
              <th scope="col">Source</th>
              <th scope="col">Status</th>
              <th scope="col">History</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {packages.map((record) => (
              <PackageRow key={record.dmpackageid} api={api} record={record} busy={busy} actions={actions} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** One package's row: its record, and a button (or the download link) for each action its status allows. */
function PackageRow({
  api,
  record,
  busy,
  actions,
}: {
  api: Api;
  record: PackageRecord;
  busy: boolean;
  actions: PackageActions;
}) {
  // The button of an action on this package; its label names the package for screen readers (and the tests).
  const actionButton = (label: string, act: (record: PackageRecord) => void) => (
    <button
      key={label}
      type="button"
      class="secondary"
      disabled={busy}
      onClick={() => act(record)}
      aria-label={`${label} package ${record.dmpackageid}`}
    >
      {label}
    </button>
  );
  return (
    <tr data-package={record.dmpackageid}>
      <td>{record.dmpackageid}</td>
      <td>{record.pkgdefname}</td>
      <td data-kind>
        {kindOf(record)}
        {record.inverseof ? <small> of package {record.inverseof}</small> : null}
      </td>
      <td>{record.source}</td>
      <td>
        {record.status} <small>{formatDate(record.statusdate)}</small>
      </td>
      <td>
        Created by {record.createby} {formatDate(record.createdate)}. {record.progressstatus}
        {/* "… is ready for download" is true only while the package is; a closed one has no content. */}
        {record.distributionmessage && record.status === 'CREATED' ? ` ${record.distributionmessage}` : ''}
      </td>
      <td class="actions">
        <div class="actions">
          {actionsOf(record).map((name) =>
            name === 'download' ? (
              <a
                key={name}
                class="button secondary"
                href={`${api.base}/oslc/dm/download?dmpackagedef=${encodeURIComponent(record.pkgdefname)}&dmpackageid=${record.dmpackageid}`}
                download
              >
                Download
              </a>
            ) : (
              actionButton(ACTION_LABELS[name], actions[name])
            ),
          )}
        </div>
      </td>
    </tr>
  );
}

function DefinitionTable({ definitions }: { definitions: Definition[] }) {
  return (
    <section aria-labelledby="definitions-title">
      <h2 id="definitions-title">Definitions</h2>
      <ul>
        {definitions.map((definition) => (
          <li key={definition.pkgdefname}>
            <strong>{definition.pkgdefname}</strong> ({definition.type}, {definition.status}){' '}
            {definition.description ?? ''}
          </li>
        ))}
      </ul>
    </section>
  );
}
