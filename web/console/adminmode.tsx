import { useState } from 'preact/hooks';
import { ErrorMessage, formatDate, Page, Status, useAction, useLoad, type PageProps } from './common.js';
import { ADMIN_MODE_STATES } from './overview.js';

interface AdminModeStatus {
  state: number;
  numsessions: number | null;
  logoutmin: number | null;
  changeby: string | null;
  changedate: string | null;
  logoutdate: string | null;
  remainingsessions: number;
  adminsessions: number;
}

/** Admin mode (docs/adminmode.md): its live state, turned on with `numsessions` and `logoutmin`, and off. */
export function AdminMode({ api }: PageProps) {
  const status = useLoad(() => api.call<AdminModeStatus>('/oslc/adminmode/state'), 2000);
  const [numsessions, setNumsessions] = useState('1');
  const [logoutmin, setLogoutmin] = useState('5');
  const action = useAction();
  const turnOn = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api.call('/oslc/adminmode/on', {
        method: 'POST',
        body: { numsessions: Number(numsessions), logoutmin: Number(logoutmin) },
      });
      await status.reload();
      return 'Admin mode is being turned on.';
    });
  };
  const turnOff = () =>
    void action.run(async () => {
      await api.call('/oslc/adminmode/off', { method: 'POST', body: {} });
      await status.reload();
      return 'Admin mode was turned off.';
    });
  const state = status.data;
  return (
    <Page title="Admin mode">
      <ErrorMessage error={status.error} />
      {state && (
        <dl class="facts" aria-live="polite">
          <dt>State</dt>
          <dd id="adminmode-state">{ADMIN_MODE_STATES[state.state] ?? state.state}</dd>
          <dt>Changed by</dt>
          <dd>
            {state.changeby ?? ''} {formatDate(state.changedate)}
          </dd>
          <dt>Ordinary sessions remaining</dt>
          <dd>{state.remainingsessions}</dd>
          <dt>Administrator sessions</dt>
          <dd>{state.adminsessions}</dd>
          {state.logoutdate && (
            <>
              <dt>Ordinary sessions end at</dt>
              <dd>{formatDate(state.logoutdate)}</dd>
            </>
          )}
        </dl>
      )}
      <form class="inline" onSubmit={turnOn}>
        <label for="numsessions">Sessions allowed (numsessions)</label>
        <input
          id="numsessions"
          type="number"
          min="1"
          value={numsessions}
          onInput={(event) => setNumsessions(event.currentTarget.value)}
        />
        <label for="logoutmin">Minutes before logout (logoutmin)</label>
        <input
          id="logoutmin"
          type="number"
          min="0"
          step="any"
          value={logoutmin}
          onInput={(event) => setLogoutmin(event.currentTarget.value)}
        />
        <button type="submit" disabled={action.busy}>
          Turn admin mode on
        </button>
        <button type="button" class="secondary" disabled={action.busy} onClick={turnOff}>
          Turn admin mode off
        </button>
      </form>
      <ErrorMessage error={action.error} />
      <Status text={action.message} />
    </Page>
  );
}
