import { useState } from 'preact/hooks';
import type { Api } from './api.js';
import { ErrorMessage, formatDate, Page, Status, useAction, useLoad, type PageProps } from './common.js';
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
}

/** `Deploying: 40,000 of 100,000 records` (docs/migration.md, "Progress") as a fraction, when it says so. */
export function deployFraction(progress: string | undefined): { done: number; total: number } | undefined {
  const match = /(\d[\d,]*) of (\d[\d,]*) records/.exec(progress ?? '');
  if (!match) return undefined;
  const done = Number(match[1]!.replace(/,/g, ''));
  const total = Number(match[2]!.replace(/,/g, ''));
  return total > 0 ? { done, total } : undefined;
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

/** Definitions and packages (docs/migration.md): create, distribute, download, upload, preview, deploy, close. */
export function Packages({ api }: PageProps) {
  const data = useLoad(() => loadAll(api));
  const action = useAction();
  const [preview, setPreview] = useState<PreviewAnswer | undefined>(undefined);
  const [deploying, setDeploying] = useState<{ record: PackageRecord; finished: boolean } | undefined>(
    undefined,
  );
  const post = (path: string, body: unknown) =>
    api.call<Record<string, unknown>>(`/oslc/dm/${path}`, { method: 'POST', body });
  const done = async (text: string) => {
    await data.reload();
    return text;
  };
  const actions: PackageActions = {
    distribute: (record) =>
      void action.run(async () => {
        const answer = await post('distribute', {
          pkgdefname: record.pkgdefname,
          dmpackageid: record.dmpackageid,
        });
        return done(String(answer.distributionmessage ?? `Package ${record.dmpackageid} was distributed.`));
      }),
    preview: (record) =>
      void action.run(async () => {
        setPreview(
          (await post('preview', {
            pkgdefname: record.pkgdefname,
            dmpackageid: record.dmpackageid,
          })) as unknown as PreviewAnswer,
        );
        return `Preview of package ${record.dmpackageid}: nothing was written.`;
      }),
    deploy: (record) =>
      void action.run(async () => {
        setDeploying({ record, finished: false });
        try {
          const answer = await post('deploy', {
            pkgdefname: record.pkgdefname,
            dmpackageid: record.dmpackageid,
          });
          return await done(String(answer.warningmsg ?? `Package ${record.dmpackageid} was deployed.`));
        } finally {
          setDeploying({ record, finished: true });
        }
      }),
    close: (record) =>
      void action.run(async () => {
        await post('close', { pkgdefname: record.pkgdefname, dmpackageid: record.dmpackageid });
        return done(`Package ${record.dmpackageid} was closed.`);
      }),
  };
  return (
    <Page title="Packages">
      <ErrorMessage error={data.error ?? action.error} />
      <Status text={action.message} />
      {deploying && (
        <DeployProgress
          key={`${deploying.record.dmpackageid} ${String(deploying.finished)}`}
          api={api}
          record={deploying.record}
          finished={deploying.finished}
        />
      )}
      {preview && <Preview answer={preview} />}
      <CreatePackage api={api} definitions={data.data?.definitions ?? []} run={action.run} done={done} />
      <UploadPackage api={api} run={action.run} done={done} />
      <PackageTable api={api} packages={data.data?.packages ?? []} busy={action.busy} actions={actions} />
      <DefinitionTable definitions={data.data?.definitions ?? []} />
    </Page>
  );
}

interface PackageActions {
  distribute: (record: PackageRecord) => void;
  preview: (record: PackageRecord) => void;
  deploy: (record: PackageRecord) => void;
  close: (record: PackageRecord) => void;
}

type Run = (action: () => Promise<string | undefined>) => Promise<void>;

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
  const [name, setName] = useState('');
  const [readme, setReadme] = useState('');
  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const record = await api.call<PackageRecord>('/oslc/dm/create', {
        method: 'POST',
        body: { pkgdefname: name || definitions[0]?.pkgdefname, readme },
      });
      return done(`Package ${record.dmpackageid} of ${record.pkgdefname} was created.`);
    });
  };
  return (
    <form class="inline" onSubmit={submit} aria-labelledby="create-title">
      <h2 id="create-title">Create a package</h2>
      <label for="create-definition">Definition</label>
      <select id="create-definition" value={name} onChange={(event) => setName(event.currentTarget.value)}>
        {definitions.map((definition) => (
          <option key={definition.pkgdefname} value={definition.pkgdefname}>
            {definition.pkgdefname}
          </option>
        ))}
      </select>
      <label for="create-readme">Read-me</label>
      <input id="create-readme" value={readme} onInput={(event) => setReadme(event.currentTarget.value)} />
      <button type="submit">Create</button>
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

/** The deploy's progress, read while it runs (`/dm/package`, answered from the deploying process's memory). */
function DeployProgress({ api, record, finished }: { api: Api; record: PackageRecord; finished: boolean }) {
  const live = useLoad(
    () =>
      api.call<PackageRecord>(
        `/oslc/dm/package?pkgdefname=${encodeURIComponent(record.pkgdefname)}&dmpackageid=${record.dmpackageid}`,
      ),
    finished ? undefined : 300,
  );
  const running = deployFraction(live.data?.progressstatus);
  const fraction = finished && live.data?.status === 'DEPLOYED' ? { done: 1, total: 1 } : running;
  return (
    <div class="progress">
      <label for="deploy-progress">Deploying package {record.dmpackageid}</label>
      <progress id="deploy-progress" max={fraction?.total ?? 1} value={fraction?.done} />
      <span role="status">{live.data?.progressstatus ?? 'Starting'}</span>
    </div>
  );
}

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
  const button = (label: string, record: PackageRecord, act: (record: PackageRecord) => void) => (
    <button
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
    <section aria-labelledby="packages-title">
      <h2 id="packages-title">Packages</h2>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Definition</th>
              <th scope="col">Source</th>
              <th scope="col">Status</th>
              <th scope="col">History</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {packages.map((record) => (
              <tr key={record.dmpackageid} data-package={record.dmpackageid}>
                <td>{record.dmpackageid}</td>
                <td>{record.pkgdefname}</td>
                <td>{record.source}</td>
                <td>
                  {record.status} <small>{formatDate(record.statusdate)}</small>
                </td>
                <td>
                  Created by {record.createby} {formatDate(record.createdate)}. {record.progressstatus}
                  {record.distributionmessage ? ` ${record.distributionmessage}` : ''}
                </td>
                <td class="actions">
                  {record.status === 'CREATED' && button('Distribute', record, actions.distribute)}
                  {record.status === 'CREATED' && (
                    <a
                      class="button secondary"
                      href={`${api.base}/oslc/dm/download?dmpackagedef=${encodeURIComponent(record.pkgdefname)}&dmpackageid=${record.dmpackageid}`}
                      download
                    >
                      Download
                    </a>
                  )}
                  {record.status.startsWith('DEPLOY') && button('Preview', record, actions.preview)}
                  {record.status.startsWith('DEPLOY') && button('Deploy', record, actions.deploy)}
                  {record.status !== 'CLOSED' && button('Close', record, actions.close)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
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
