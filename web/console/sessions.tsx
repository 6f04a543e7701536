import { ErrorMessage, formatDate, Page, Status, useAction, useLoad, type PageProps } from './common.js';

interface ActiveSession {
  sessionid: number;
  userid: string;
  scheme: string;
  clientaddr: string | null;
  lastactive: string;
  current: boolean;
}

/** The live sessions of every process (`GET <root>/sessions`); ending one ends it everywhere at once. */
export function Sessions({ api, model }: PageProps) {
  const list = useLoad(
    () => api.call<{ member: ActiveSession[] }>('/oslc/sessions').then((answer) => answer.member),
    5000,
  );
  const action = useAction();
  const end = (session: ActiveSession) =>
    void action.run(async () => {
      await api.call(`/oslc/sessions/${session.sessionid}`, { method: 'DELETE' });
      if (session.current) {
        location.assign(`${model.base}/console/signin`);
        return undefined;
      }
      await list.reload();
      return `The session of ${session.userid} was ended.`;
    });
  return (
    <Page title="Sessions">
      <ErrorMessage error={list.error ?? action.error} />
      <Status text={action.message} />
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Scheme</th>
              <th scope="col">Address</th>
              <th scope="col">Last seen</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((session) => (
              <tr key={session.sessionid} data-session={session.sessionid}>
                <td>
                  {session.userid}
                  {session.current ? ' (this session)' : ''}
                </td>
                <td>{session.scheme}</td>
                <td>{session.clientaddr ?? ''}</td>
                <td>{formatDate(session.lastactive)}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    disabled={action.busy}
                    onClick={() => end(session)}
                    aria-label={`End the session ${session.sessionid} of ${session.userid}`}
                  >
                    End
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}
