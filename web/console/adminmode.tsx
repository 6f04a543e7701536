import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage, formatDate, Page, Status, useAction, useLoad, type PageProps } from './common.js';
import { adminModeDefaults } from './deploy-flow.js';
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

const TURNING_ON = 'Admin mode is being turned on.';

/** Admin mode (docs/adminmode.md): its live state, turned on with `numsessions` and `logoutmin`, and off. */
export function AdminMode({ api }: PageProps) {
  const status = useLoad(() => api.call<AdminModeStatus>('/oslc/adminmode/state'), 2000);
  const [numsessions, setNumsessions] = useState('');
  const [logoutmin, setLogoutmin] = useState('');
  // The form starts from the properties' values (mxe.adminmode.numsessions, mxe.adminmode.logoutmin).
  useEffect(() => {
    void adminModeDefaults(api)
      .then((defaults) => {
        setNumsessions((typed) => (typed === '' ? defaults.numsessions : typed));
        setLogoutmin((typed) => (typed === '' ? defaults.logoutmin : typed));
      })
      .catch(() => undefined);
  }, []);
  const action = useAction();
  const turnOn = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const settings: Record<string, number> = {};
      if (numsessions !== '') settings.numsessions = Number(numsessions);
      if (logoutmin !== '') settings.logoutmin = Number(logoutmin);
      await api.call('/oslc/adminmode/on', { method: 'POST', body: settings });
      await status.reload();
      return TURNING_ON;
    });
  };
  const turnOff = () =>
    void action.run(async () => {
      await api.call('/oslc/adminmode/off', { method: 'POST', body: {} });
      await status.reload();
      return 'Admin mode was turned off.';
    });
  const state = status.data;
  // The message of "on" follows the live state: it says "being turned on" only while it is.
  const message = action.message === TURNING_ON && state?.state === 1 ? 'Admin mode is on.' : action.message;
  return (
    <Page title="Admin mode">
      <ErrorMessage error={status.error} />
      {state && <AdminModeFacts state={state} />}
      <form class="inline" onSubmit={turnOn}>
        <span class="field">
          <label for="numsessions">Sessions allowed (numsessions)</label>
          <input
            id="numsessions"
            type="number"
            min="1"
            value={numsessions}
            onInput={(event) => setNumsessions(event.currentTarget.value)}
          />
        </span>
        <span class="field">
          <label for="logoutmin">Minutes before logout (logoutmin)</label>
          <input
            id="logoutmin"
            type="number"
            min="0"
            step="any"
            value={logoutmin}
            onInput={(event) => setLogoutmin(event.currentTarget.value)}
          />
        </span>
        <button type="submit" disabled={action.busy}>
          Turn admin mode on
        </button>
        <button type="button" class="secondary" disabled={action.busy} onClick={turnOff}>
          Turn admin mode off
        </button>
      </form>
      <ErrorMessage error={action.error} />
      <Status text={message} />
    </Page>
  );
}

/** The live state of admin mode, as the page reads it every two seconds. */
function AdminModeFacts({ state }: { state: AdminModeStatus }) {
  return (
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
  );
}
