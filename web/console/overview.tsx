import type { Api } from './api.js';
import { ErrorMessage, formatDate, Page, useLoad, type PageProps } from './common.js';

interface ServerProcess {
  servername: string;
  thisserver: boolean;
  applied: number;
  pending: number;
  lastappliedat: string | null;
}

interface AdminModeState {
  state: number;
  numsessions: number | null;
  logoutmin: number | null;
}

/** Which deployment this is: the `source` its packages name (docs/migration.md, "Source"). */
interface Deployment {
  id: string;
  source: string;
  createdate: string;
}

interface Facts {
  deployment: Deployment;
  servers: ServerProcess[];
  adminMode: AdminModeState;
  counts: Array<[string, number]>;
}

export const ADMIN_MODE_STATES: Record<number, string> = { 0: 'Off', 1: 'On', 2: 'Turning on' };

async function loadFacts(api: Api): Promise<Facts> {
  const [system, servers, adminMode, users, keys, sessions, packages] = await Promise.all([
    api.call<{ deployment: Deployment }>('/oslc/systeminfo?lean=1'),
    api.call<{ member: ServerProcess[] }>('/oslc/servers'),
    api.call<AdminModeState>('/oslc/adminmode/state'),
    api.count('mxapiperuser'),
    api.count('mxapiapikey'),
    api.call<{ member: unknown[] }>('/oslc/sessions'),
    api.count('mxapidmpackage'),
  ]);
  return {
    deployment: system.deployment,
    servers: servers.member,
    adminMode,
    counts: [
      ['Users', users],
      ['API keys', keys],
      ['Sessions', sessions.member.length],
      ['Packages', packages],
    ],
  };
}

/** Version, server processes, admin mode and counts; a user who is not an administrator sees only who they are. */
export function Overview({ api, model }: PageProps) {
  if (!model.user?.isAdmin) {
    return (
      <Page title="Overview">
        <p>
          Version {model.version}. You are signed in as {model.user?.userid}: the API keys page manages your
          own key.
        </p>
      </Page>
    );
  }
  return <AdminOverview api={api} version={model.version} />;
}

function AdminOverview({ api, version }: { api: Api; version: string }) {
  const { data, error } = useLoad(() => loadFacts(api), 5000);
  return (
    <Page title="Overview">
      <p>Version {version}</p>
      <ErrorMessage error={error} />
      {data && (
        <>
          <p>
            Deployment <code data-deployment={data.deployment.id}>{data.deployment.source}</code>, the source
            its packages name; identity given {formatDate(data.deployment.createdate)}.
          </p>
          <dl class="counts">
            {data.counts.map(([name, count]) => (
              <div key={name}>
                <dt>{name}</dt>
                <dd data-count={name}>{count}</dd>
              </div>
            ))}
            <div>
              <dt>Admin mode</dt>
              <dd data-count="Admin mode">
                {ADMIN_MODE_STATES[data.adminMode.state] ?? data.adminMode.state}
              </dd>
            </div>
          </dl>
          <h2>Server processes</h2>
          <div class="scroll">
            <table>
              <caption>
                The server processes sharing this database. Every process applies every system property: how
                many it has applied, and how many changed values it applies only once restarted.
              </caption>
              <thead>
                <tr>
                  <th scope="col">Server name</th>
                  <th scope="col">System properties applied</th>
                  <th scope="col">Changes waiting for a restart</th>
                  <th scope="col">Last applied</th>
                </tr>
              </thead>
              <tbody>
                {data.servers.map((server) => (
                  <tr key={server.servername}>
                    <td>
                      {server.servername}
                      {server.thisserver ? ' (this process)' : ''}
                    </td>
                    <td>{server.applied}</td>
                    <td>{server.pending}</td>
                    <td>{formatDate(server.lastappliedat)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Page>
  );
}
