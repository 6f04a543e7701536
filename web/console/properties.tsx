import { useState } from 'preact/hooks';
import type { Api } from './api.js';
import { ErrorMessage, formatDate, Page, Status, useAction, useLoad, type PageProps } from './common.js';

interface Applied {
  servername: string;
  propvalue: string | null;
  appliedat: string;
  storedvalue: string | null;
  pending: boolean;
}

interface Description {
  propname: string;
  description: string | null;
  maxtype: string;
  maximodefault: string | null;
  onlinechanges: boolean;
  liverefresh: boolean;
  masked: boolean;
  encrypted: boolean;
  maxpropvalue: Array<{ servername: string; propvalue: string | null }>;
  maxpropapplied: Applied[];
}

const MASK = '********';

const secure = (property: Description) => property.masked || property.encrypted;

/** The value that applies everywhere without a value of its own: COMMON's, else the default. */
function commonValue(property: Description): string {
  if (secure(property)) return MASK;
  const common = property.maxpropvalue.find((value) => value.servername.toUpperCase() === 'COMMON');
  return (common ? common.propvalue : property.maximodefault) ?? '';
}

const describeAll = (api: Api) =>
  api
    .call<{ member: Description[] }>('/oslc/service/system?action=wsmethod:describeProperties')
    .then((answer) => answer.member);

/** The registry, searched by name; a value changed through setProperty, and each process's acknowledgement. */
export function Properties({ api }: PageProps) {
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const registry = useLoad(() => describeAll(api));
  const needle = search.trim().toLowerCase();
  const shown = (registry.data ?? []).filter((property) => property.propname.toLowerCase().includes(needle));
  const chosen = registry.data?.find((property) => property.propname === selected);
  return (
    <Page title="System properties">
      <label for="property-search">Search by name</label>
      <input
        id="property-search"
        type="search"
        value={search}
        onInput={(event) => setSearch(event.currentTarget.value)}
      />
      <ErrorMessage error={registry.error} />
      {chosen && <ChangeValue key={chosen.propname} api={api} property={chosen} reload={registry.reload} />}
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Value</th>
              <th scope="col">Online change</th>
              <th scope="col">Applied per process</th>
            </tr>
          </thead>
          <tbody>
            {shown.slice(0, 200).map((property) => (
              <tr key={property.propname}>
                <td>
                  <button
                    type="button"
                    class="link"
                    onClick={() => setSelected(property.propname)}
                    aria-label={`Change ${property.propname}`}
                  >
                    {property.propname}
                  </button>
                </td>
                <td>{property.maxtype}</td>
                <td class="value">{commonValue(property)}</td>
                <td>{property.onlinechanges ? 'Yes' : 'No'}</td>
                <td>
                  <AppliedList property={property} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}

function AppliedList({ property }: { property: Description }) {
  return (
    <ul class="applied">
      {property.maxpropapplied.map((applied) => (
        <li key={applied.servername} data-server={applied.servername}>
          {applied.servername}: {secure(property) ? MASK : (applied.propvalue ?? '')}
          {applied.pending ? ' (waits for restart)' : ''}
        </li>
      ))}
    </ul>
  );
}

/** After a set, reads the property again until every process that runs it acknowledged the value (or 5 s). */
async function waitForAcknowledgements(api: Api, name: string): Promise<Description | undefined> {
  let latest: Description | undefined;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const answer = await api.call<{ member: Description[] }>(
      `/oslc/service/system?action=wsmethod:describeProperties&propNames=${encodeURIComponent(name)}`,
    );
    latest = answer.member[0];
    if (
      latest &&
      latest.maxpropapplied.every((applied) => applied.pending || applied.propvalue === applied.storedvalue)
    )
      return latest;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return latest;
}

function ChangeValue({
  api,
  property,
  reload,
}: {
  api: Api;
  property: Description;
  reload: () => Promise<void>;
}) {
  const [value, setValue] = useState(secure(property) ? '' : commonValue(property));
  const [server, setServer] = useState('COMMON');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api.call('/oslc/service/system?action=wsmethod:setProperty', {
        method: 'POST',
        body: { propName: property.propname, serverName: server, propValue: value },
      });
      const after = await waitForAcknowledgements(api, property.propname);
      await reload();
      const acknowledged = (after?.maxpropapplied ?? [])
        .filter((applied) => !applied.pending)
        .map((applied) => `${applied.servername} at ${formatDate(applied.appliedat)}`);
      return `${property.propname} was changed. Applied by ${acknowledged.join(', ') || 'no process yet'}.`;
    });
  };
  return (
    <form class="change" onSubmit={submit} aria-labelledby="change-title">
      <h2 id="change-title">Change {property.propname}</h2>
      {property.description && <p>{property.description}</p>}
      {!property.onlinechanges && <p>This property cannot be changed while the service runs.</p>}
      {!property.liverefresh && <p>Each process applies a new value when it restarts.</p>}
      <label for="property-value">Value</label>
      <input
        id="property-value"
        type={secure(property) ? 'password' : 'text'}
        value={value}
        onInput={(event) => setValue(event.currentTarget.value)}
      />
      <label for="property-server">Server name</label>
      <input id="property-server" value={server} onInput={(event) => setServer(event.currentTarget.value)} />
      <button type="submit" disabled={action.busy || !property.onlinechanges}>
        Save
      </button>
      <ErrorMessage error={action.error} />
      <Status text={action.message} />
    </form>
  );
}
