import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, describeError, type Api } from './api.js';
import { useLoad } from './common.js';

/** The package a flow works on (its record as the Packages page lists it). */
export interface FlowPackage {
  dmpackageid: number;
  pkgdefname: string;
}

/** Deploy, or back out a deployed package (docs/migration.md, "Back-out"). */
export type FlowKind = 'deploy' | 'backout';

type StepName = 'run' | 'adminmode-on' | 'adminmode-wait' | 'complete' | 'adminmode-off';
type StepStatus = 'running' | 'done' | 'failed';

interface StepRecord {
  name: StepName;
  status: StepStatus;
  detail: string;
}

/** The answer of a deploy that needs admin mode (docs/adminmode.md). */
export const ADMIN_MODE_NEEDED = 'BMXAA0578E';

/** The admin mode settings of the properties (docs/adminmode.md): what `adminmode/on` uses when given none. */
export async function adminModeDefaults(api: Api): Promise<{ numsessions: string; logoutmin: string }> {
  const values = await api.call<Record<string, string | null>>(
    '/oslc/service/system?action=wsmethod:getProperties&propNames=mxe.adminmode.numsessions,mxe.adminmode.logoutmin',
  );
  return {
    numsessions: String(values['mxe.adminmode.numsessions'] ?? ''),
    logoutmin: String(values['mxe.adminmode.logoutmin'] ?? ''),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long the page waits for admin mode state 1 before it gives up (and turns it off again). */
const ADMIN_MODE_WAIT_MS = 15 * 60 * 1000;

/**
 * A deploy (or a back-out) from the console, as `eas migrate` runs it (docs/console.md, "Packages"): the call with its
 * progress; when it answers BMXAA0578E, the offer to turn admin mode on (numsessions and logoutmin of the
 * properties), then each step shown as it runs: admin mode on, waiting for state 1, the deploy completed, admin mode
 * off. The administrator can stop after any step, and go on or turn admin mode off from there.
 */
export function DeployFlow({
  api,
  record,
  kind,
  ended,
}: {
  api: Api;
  record: FlowPackage;
  kind: FlowKind;
  /** Called when the flow ends (the packages are read again). */
  ended: () => void;
}) {
  const [steps, setSteps] = useState<StepRecord[]>([]);
  const [offer, setOffer] = useState<{ numsessions: string; logoutmin: string } | undefined>(undefined);
  const [stopped, setStopped] = useState<StepName | undefined>(undefined);
  const [running, setRunning] = useState(false);
  const [adminModeOn, setAdminModeOn] = useState(false);
  const [progressOf, setProgressOf] = useState<{ live: boolean } | undefined>(undefined);
  const stopAfterStep = useRef(false);
  const [stopAsked, setStopAsked] = useState(false);
  const noun = kind === 'deploy' ? 'deploy' : 'back-out';
  const body = { pkgdefname: record.pkgdefname, dmpackageid: record.dmpackageid };
  const path = kind === 'deploy' ? '/oslc/dm/deploy' : '/oslc/dm/backout';

  const put = (step: StepRecord) =>
    setSteps((current) => [...current.filter((entry) => entry.name !== step.name), step]);

  /** One step: shown running, then done or failed; false when it failed. */
  const step = async (name: StepName, running: string, act: () => Promise<string>): Promise<boolean> => {
    put({ name, status: 'running', detail: running });
    try {
      put({ name, status: 'done', detail: await act() });
      return true;
    } catch (error) {
      put({ name, status: 'failed', detail: describeError(error) });
      return false;
    }
  };

  const call = async () => {
    setProgressOf({ live: true });
    try {
      const answer = await api.call<{ warningmsg?: string }>(path, { method: 'POST', body });
      return String(answer.warningmsg ?? `Package ${record.dmpackageid}: ${noun} done.`);
    } finally {
      setProgressOf({ live: false });
    }
  };

  // The first call: the deploy itself; BMXAA0578E turns into the offer of admin mode.
  useEffect(() => {
    let over = false;
    void (async () => {
      setRunning(true);
      put({ name: 'run', status: 'running', detail: `${noun} of package ${record.dmpackageid}` });
      try {
        const message = await call();
        put({ name: 'run', status: 'done', detail: message });
        ended();
      } catch (error) {
        if (error instanceof ApiError && error.reasonCode === ADMIN_MODE_NEEDED) {
          setProgressOf(undefined);
          put({ name: 'run', status: 'done', detail: describeError(error) });
          if (!over) setOffer(await adminModeDefaults(api).catch(() => ({ numsessions: '', logoutmin: '' })));
        } else {
          put({ name: 'run', status: 'failed', detail: describeError(error) });
          ended();
        }
      } finally {
        setRunning(false);
      }
    })();
    return () => {
      over = true;
    };
  }, []);

  /** The steps after `from`, in order; stops after a step when asked, always turns admin mode off after a failure. */
  const goOn = async (from: StepName, settings: { numsessions: string; logoutmin: string }) => {
    const order: StepName[] = ['adminmode-on', 'adminmode-wait', 'complete', 'adminmode-off'];
    setRunning(true);
    setStopped(undefined);
    stopAfterStep.current = false;
    setStopAsked(false);
    let failed = false;
    for (const name of order.slice(order.indexOf(from))) {
      if (failed && name !== 'adminmode-off') continue;
      const ok = await runStep(name, settings);
      if (!ok) failed = true;
      if (stopAfterStep.current && name !== 'adminmode-off' && !failed) {
        setStopped(name);
        setRunning(false);
        return;
      }
    }
    setRunning(false);
    ended();
  };

  const runStep = (name: StepName, settings: { numsessions: string; logoutmin: string }) => {
    switch (name) {
      case 'adminmode-on':
        return step(name, 'turning admin mode on', async () => {
          const requested: Record<string, number> = {};
          if (settings.numsessions !== '') requested.numsessions = Number(settings.numsessions);
          if (settings.logoutmin !== '') requested.logoutmin = Number(settings.logoutmin);
          await api.call('/oslc/adminmode/on', { method: 'POST', body: requested });
          setAdminModeOn(true);
          return `asked (numsessions ${settings.numsessions || 'default'}, logoutmin ${settings.logoutmin || 'default'})`;
        });
      case 'adminmode-wait':
        return step(name, 'waiting for admin mode (state 1)', async () => {
          const started = Date.now();
          for (;;) {
            const answer = await api.call<{ state: number }>('/oslc/adminmode/state');
            if (answer.state === 1) return 'admin mode is on (state 1)';
            if (Date.now() - started > ADMIN_MODE_WAIT_MS)
              throw new Error('Admin mode did not reach state 1 within 15 minutes.');
            put({
              name,
              status: 'running',
              detail: `waiting for admin mode: state ${answer.state}, ${Math.round((Date.now() - started) / 1000)} s`,
            });
            await sleep(1000);
          }
        });
      case 'complete':
        return step(name, `completing the ${noun}`, async () => {
          if (kind === 'backout') return call();
          setProgressOf({ live: true });
          try {
            const answer = await api.call<{ warningmsg?: string }>('/oslc/dm/completedeploy', {
              method: 'POST',
              body,
            });
            return String(answer.warningmsg ?? `Package ${record.dmpackageid} was deployed.`);
          } finally {
            setProgressOf({ live: false });
          }
        });
      default:
        return step('adminmode-off', 'turning admin mode off', async () => {
          await api.call('/oslc/adminmode/off', { method: 'POST', body: {} });
          setAdminModeOn(false);
          return 'admin mode is off';
        });
    }
  };

  const next: Record<StepName, StepName | undefined> = {
    run: 'adminmode-on',
    'adminmode-on': 'adminmode-wait',
    'adminmode-wait': 'complete',
    complete: 'adminmode-off',
    'adminmode-off': undefined,
  };
  return (
    <section class="flow" aria-labelledby="flow-title">
      <h2 id="flow-title">
        {kind === 'deploy' ? 'Deploy' : 'Back-out'} of package {record.dmpackageid} ({record.pkgdefname})
      </h2>
      <ol class="steps">
        {steps.map((entry) => (
          <li key={entry.name} data-step={entry.name} data-status={entry.status}>
            <strong>{STEP_TITLES[entry.name](noun)}</strong>: {STATUS_TEXT[entry.status]}
            {entry.detail ? ` - ${entry.detail}` : ''}
          </li>
        ))}
      </ol>
      {progressOf && (
        <Progress
          key={String(progressOf.live)}
          api={api}
          record={record}
          live={progressOf.live}
          noun={noun}
        />
      )}
      {offer && steps.every((entry) => entry.name === 'run') && (
        <form
          class="inline"
          onSubmit={(event) => {
            event.preventDefault();
            void goOn('adminmode-on', offer);
          }}
        >
          <p class="flow-offer">
            The {noun} changes the configuration: it needs admin mode. Turn it on, wait until it is on,
            complete the {noun} and turn it off again?
          </p>
          <span class="field">
            <label for="flow-numsessions">Sessions allowed (numsessions)</label>
            <input
              id="flow-numsessions"
              type="number"
              min="1"
              value={offer.numsessions}
              onInput={(event) => setOffer({ ...offer, numsessions: event.currentTarget.value })}
            />
          </span>
          <span class="field">
            <label for="flow-logoutmin">Minutes before logout (logoutmin)</label>
            <input
              id="flow-logoutmin"
              type="number"
              min="0"
              step="any"
              value={offer.logoutmin}
              onInput={(event) => setOffer({ ...offer, logoutmin: event.currentTarget.value })}
            />
          </span>
          <button type="submit">Turn admin mode on and {noun}</button>
        </form>
      )}
      {running && offer && (
        <button
          type="button"
          class="secondary"
          disabled={stopAsked}
          onClick={() => {
            stopAfterStep.current = true;
            setStopAsked(true);
          }}
        >
          {stopAsked ? 'Stopping after this step' : 'Stop after this step'}
        </button>
      )}
      {stopped && offer && (
        <div class="flow-stopped" role="status">
          <p>
            Stopped after “{STEP_TITLES[stopped](noun)}”.
            {adminModeOn ? ' Admin mode is on.' : ''}
          </p>
          {next[stopped] && (
            <button type="button" onClick={() => void goOn(next[stopped]!, offer)}>
              Go on: {STEP_TITLES[next[stopped]!](noun)}
            </button>
          )}{' '}
          {adminModeOn && next[stopped] !== 'adminmode-off' && (
            <button type="button" class="secondary" onClick={() => void goOn('adminmode-off', offer)}>
              Turn admin mode off now
            </button>
          )}
        </div>
      )}
    </section>
  );
}

const STEP_TITLES: Record<StepName, (noun: string) => string> = {
  run: (noun) => (noun === 'deploy' ? 'Deploy' : 'Back-out'),
  'adminmode-on': () => 'Turn admin mode on',
  'adminmode-wait': () => 'Wait for admin mode',
  complete: (noun) => `Complete the ${noun}`,
  'adminmode-off': () => 'Turn admin mode off',
};

const STATUS_TEXT: Record<StepStatus, string> = { running: 'under way', done: 'done', failed: 'failed' };

interface PackageProgress {
  status?: string;
  progressstatus?: string;
}

/** `Deploying: 40,000 of 100,000 records` (docs/migration.md, "Progress") as a fraction, when it says so. */
export function deployFraction(progress: string | undefined): { done: number; total: number } | undefined {
  const match = /(\d[\d,]*) of (\d[\d,]*) records/.exec(progress ?? '');
  if (!match) return undefined;
  const done = Number(match[1]!.replace(/,/g, ''));
  const total = Number(match[2]!.replace(/,/g, ''));
  return total > 0 ? { done, total } : undefined;
}

/**
 * The work's progress, read while it runs (`/dm/package`, answered from the deploying process's memory); once it
 * ended, read once more and told as ended, with the package's status.
 */
function Progress({
  api,
  record,
  live,
  noun,
}: {
  api: Api;
  record: FlowPackage;
  live: boolean;
  noun: string;
}) {
  const state = useLoad(
    () =>
      api.call<PackageProgress>(
        `/oslc/dm/package?pkgdefname=${encodeURIComponent(record.pkgdefname)}&dmpackageid=${record.dmpackageid}`,
      ),
    live ? 300 : undefined,
  );
  const status = state.data?.status;
  const complete = !live && (status === 'DEPLOYED' || status === 'BACKEDOUT');
  const fraction = complete
    ? { done: 1, total: 1 }
    : live
      ? deployFraction(state.data?.progressstatus)
      : undefined;
  const label = live
    ? `${noun === 'deploy' ? 'Deploying' : 'Backing out'} package ${record.dmpackageid}`
    : `The ${noun} of package ${record.dmpackageid} ended${status ? ` (${status})` : ''}`;
  return (
    <div class="progress" data-live={String(live)}>
      <label for="deploy-progress">{label}</label>
      {(live || complete) && (
        <progress id="deploy-progress" max={fraction?.total ?? 1} value={fraction?.done} />
      )}
      <span role="status">{state.data?.progressstatus ?? (live ? 'Starting' : '')}</span>
    </div>
  );
}
