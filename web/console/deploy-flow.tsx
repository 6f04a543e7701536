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

/** Admin mode's settings as the administrator typed them (or as the properties gave them). */
type AdminModeSettings = { numsessions: string; logoutmin: string };

/** What the flow's steps act on and record into; the same for every step of one flow. */
interface FlowContext {
  api: Api;
  record: FlowPackage;
  kind: FlowKind;
  noun: string;
  put: (step: StepRecord) => void;
  /** The deploy's (or the back-out's) own call, its progress shown while it runs. */
  call: () => Promise<string>;
  setProgressOf: (progress: { live: boolean } | undefined) => void;
  setAdminModeOn: (on: boolean) => void;
}

/** One step: shown running, then done or failed; false when it failed. */
async function recordStep(
  context: FlowContext,
  name: StepName,
  running: string,
  act: () => Promise<string>,
): Promise<boolean> {
  context.put({ name, status: 'running', detail: running });
  try {
    context.put({ name, status: 'done', detail: await act() });
    return true;
  } catch (error) {
    context.put({ name, status: 'failed', detail: describeError(error) });
    return false;
  }
}

/** Admin mode state 1 polled each second, the wait shown as it goes, until the page gives up. */
async function waitForAdminMode(context: FlowContext, name: StepName): Promise<string> {
  const started = Date.now();
  for (;;) {
    const answer = await context.api.call<{ state: number }>('/oslc/adminmode/state');
    if (answer.state === 1) return 'admin mode is on (state 1)';
    if (Date.now() - started > ADMIN_MODE_WAIT_MS)
      throw new Error('Admin mode did not reach state 1 within 15 minutes.');
    context.put({
      name,
      status: 'running',
      detail: `waiting for admin mode: state ${answer.state}, ${Math.round((Date.now() - started) / 1000)} s`,
    });
    await sleep(1000);
  }
}

/** The completion of the work under admin mode: a back-out is called again, a deploy is completed. */
async function completeWork(context: FlowContext): Promise<string> {
  const { api, record, kind } = context;
  if (kind === 'backout') return context.call();
  context.setProgressOf({ live: true });
  try {
    const answer = await api.call<{ warningmsg?: string }>('/oslc/dm/completedeploy', {
      method: 'POST',
      body: { pkgdefname: record.pkgdefname, dmpackageid: record.dmpackageid },
    });
    return String(answer.warningmsg ?? `Package ${record.dmpackageid} was deployed.`);
  } finally {
    context.setProgressOf({ live: false });
  }
}

/** One step after the offer of admin mode, run and recorded. */
function runFlowStep(context: FlowContext, name: StepName, settings: AdminModeSettings): Promise<boolean> {
  const { api } = context;
  switch (name) {
    case 'adminmode-on':
      return recordStep(context, name, 'turning admin mode on', async () => {
        const requested: Record<string, number> = {};
        if (settings.numsessions !== '') requested.numsessions = Number(settings.numsessions);
        if (settings.logoutmin !== '') requested.logoutmin = Number(settings.logoutmin);
        await api.call('/oslc/adminmode/on', { method: 'POST', body: requested });
        context.setAdminModeOn(true);
        return `asked (numsessions ${settings.numsessions || 'default'}, logoutmin ${settings.logoutmin || 'default'})`;
      });
    case 'adminmode-wait':
      return recordStep(context, name, 'waiting for admin mode (state 1)', () =>
        waitForAdminMode(context, name),
      );
    case 'complete':
      return recordStep(context, name, `completing the ${context.noun}`, () => completeWork(context));
    default:
      return recordStep(context, 'adminmode-off', 'turning admin mode off', async () => {
        await api.call('/oslc/adminmode/off', { method: 'POST', body: {} });
        context.setAdminModeOn(false);
        return 'admin mode is off';
      });
  }
}

/**
 * The first call: the deploy itself; BMXAA0578E turns into the offer of admin mode. Run once, when the flow opens
 * (the flow is remade, with a new key, for another run).
 */
function useFirstCall(
  context: FlowContext,
  ended: () => void,
  setRunning: (running: boolean) => void,
  setOffer: (offer: AdminModeSettings) => void,
) {
  const { api, record, noun, put } = context;
  useEffect(() => {
    let over = false;
    void (async () => {
      setRunning(true);
      put({ name: 'run', status: 'running', detail: `${noun} of package ${record.dmpackageid}` });
      try {
        const message = await context.call();
        put({ name: 'run', status: 'done', detail: message });
        ended();
      } catch (error) {
        if (error instanceof ApiError && error.reasonCode === ADMIN_MODE_NEEDED) {
          context.setProgressOf(undefined);
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
}

/** The flow's state, and `goOn`, which runs the steps from one of them on. */
function useDeployFlow(api: Api, record: FlowPackage, kind: FlowKind, ended: () => void) {
  const [steps, setSteps] = useState<StepRecord[]>([]);
  const [offer, setOffer] = useState<AdminModeSettings | undefined>(undefined);
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

  const call = async () => {
    setProgressOf({ live: true });
    try {
      const answer = await api.call<{ warningmsg?: string }>(path, { method: 'POST', body });
      return String(answer.warningmsg ?? `Package ${record.dmpackageid}: ${noun} done.`);
    } finally {
      setProgressOf({ live: false });
    }
  };
  const context: FlowContext = { api, record, kind, noun, put, call, setProgressOf, setAdminModeOn };
  useFirstCall(context, ended, setRunning, setOffer);

  /** The steps after `from`, in order; stops after a step when asked, always turns admin mode off after a failure. */
  const goOn = async (from: StepName, settings: AdminModeSettings) => {
    const order: StepName[] = ['adminmode-on', 'adminmode-wait', 'complete', 'adminmode-off'];
    setRunning(true);
    setStopped(undefined);
    stopAfterStep.current = false;
    setStopAsked(false);
    let failed = false;
    for (const name of order.slice(order.indexOf(from))) {
      if (failed && name !== 'adminmode-off') continue;
      const ok = await runFlowStep(context, name, settings);
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
  const askStop = () => {
    stopAfterStep.current = true;
    setStopAsked(true);
  };
  return {
    steps,
    offer,
    setOffer,
    stopped,
    running,
    adminModeOn,
    progressOf,
    stopAsked,
    askStop,
    noun,
    goOn,
  };
}

/** The step that follows each, for "Go on" after a stop. */
const NEXT_STEP: Record<StepName, StepName | undefined> = {
  run: 'adminmode-on',
  'adminmode-on': 'adminmode-wait',
  'adminmode-wait': 'complete',
  complete: 'adminmode-off',
  'adminmode-off': undefined,
};

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
  const flow = useDeployFlow(api, record, kind, ended);
  const { steps, offer, stopped, running, progressOf, noun } = flow;
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
        <AdminModeOffer offer={offer} setOffer={flow.setOffer} noun={noun} goOn={flow.goOn} />
      )}
      {running && offer && (
        <button type="button" class="secondary" disabled={flow.stopAsked} onClick={flow.askStop}>
          {flow.stopAsked ? 'Stopping after this step' : 'Stop after this step'}
        </button>
      )}
      {stopped && offer && (
        <FlowStopped
          stopped={stopped}
          offer={offer}
          adminModeOn={flow.adminModeOn}
          noun={noun}
          goOn={flow.goOn}
        />
      )}
    </section>
  );
}

/** The offer of admin mode after BMXAA0578E, its settings editable before the steps run. */
function AdminModeOffer({
  offer,
  setOffer,
  noun,
  goOn,
}: {
  offer: AdminModeSettings;
  setOffer: (offer: AdminModeSettings) => void;
  noun: string;
  goOn: (from: StepName, settings: AdminModeSettings) => Promise<void>;
}) {
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault();
        void goOn('adminmode-on', offer);
      }}
    >
      <p class="flow-offer">
        The {noun} changes the configuration: it needs admin mode. Turn it on, wait until it is on, complete
        the {noun} and turn it off again?
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
  );
}

/** Where the flow stopped when asked: going on from the next step, or turning admin mode off now. */
function FlowStopped({
  stopped,
  offer,
  adminModeOn,
  noun,
  goOn,
}: {
  stopped: StepName;
  offer: AdminModeSettings;
  adminModeOn: boolean;
  noun: string;
  goOn: (from: StepName, settings: AdminModeSettings) => Promise<void>;
}) {
  const next = NEXT_STEP[stopped];
  return (
    <div class="flow-stopped" role="status">
      <p>
        Stopped after “{STEP_TITLES[stopped](noun)}”.
        {adminModeOn ? ' Admin mode is on.' : ''}
      </p>
      {next && (
        <button type="button" onClick={() => void goOn(next, offer)}>
          Go on: {STEP_TITLES[next](noun)}
        </button>
      )}{' '}
      {adminModeOn && next !== 'adminmode-off' && (
        <button type="button" class="secondary" onClick={() => void goOn('adminmode-off', offer)}>
          Turn admin mode off now
        </button>
      )}
    </div>
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
