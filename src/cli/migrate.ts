import { EasClientError, type EasClient, type PackageRecord, type PackageRef } from '../client/index.js';
import { EXIT, exitCodeOf, type ExitCode } from './exit-codes.js';
import type { ProgressLabel } from './migrate-progress.js';
import { Interrupted, sleep, StepFailure } from './migrate-failures.js';
import { previewCounts, previewSummary, reasonAndMessage, type PreviewSummary } from './migrate-preview.js';
import { checkedTarget } from './migrate-target-check.js';

export type { PreviewRow, PreviewSummary } from './migrate-preview.js';

/** What `eas migrate` was asked to do. */
export interface MigrationPlan {
  definition: string;
  targetName?: string | undefined;
  readme: string;
  /** `file`: download from the source and upload to the target; `database`: the target reads it itself. */
  targetType: 'file' | 'database' | 'auto';
  cleanup: 'close' | 'delete' | 'none';
  numsessions?: number | undefined;
  logoutmin?: number | undefined;
  /** How long to wait for admin mode state 1. */
  adminModeTimeoutMs: number;
  pollIntervalMs: number;
  /** Attempts of the calls that must get through (admin mode off, state polls) when the connection fails. */
  retries: number;
  retryDelayMs: number;
  yes: boolean;
  dryRun: boolean;
  /** Deploy over records changed on the target since the source last matched them (docs/migration.md, "Drift guard"). */
  force?: boolean;
}

export type StepName =
  | 'check-target'
  | 'create'
  | 'distribute'
  | 'download'
  | 'upload'
  | 'preview'
  | 'confirm'
  | 'deploy'
  | 'adminmode-on'
  | 'adminmode-wait'
  | 'completedeploy'
  | 'adminmode-off'
  | 'cleanup';

export interface StepRecord {
  step: StepName;
  status: 'done' | 'skipped' | 'failed' | 'planned';
  detail?: string;
}

/** How the flow shows its progress (terminal bar, plain lines, or collected for --json). */
export interface MigrationReporter {
  stepStarted(step: StepName, text: string): void;
  stepEnded(record: StepRecord): void;
  /** Called on every poll while waiting for admin mode. */
  waiting(secondsLeft: number, totalSeconds: number, state: number | undefined): void;
  preview(summary: PreviewSummary): void;
  /**
   * How far an upload (bytes sent) or a deploy (records done) is, of `total`, and the rate since it started (per
   * second).
   */
  progress?(label: ProgressLabel, done: number, total: number, rate: number): void;
  warn(text: string): void;
}

export interface MigrationOutcome {
  exitCode: ExitCode;
  steps: StepRecord[];
  sourcePackage?: PackageRecord;
  /** Whether this run turned admin mode on, and whether it is off again. */
  adminMode: { turnedOn: boolean; off: boolean | null };
  error?: {
    reasonCode: string | null;
    message: string;
    status: number;
    request: { method: string; url: string };
  };
}

export interface MigrationContext {
  source: EasClient;
  target: EasClient;
  reporter: MigrationReporter;
  /** Asks whether to deploy the package `target` names on the target, as the preview showed it. */
  confirm(summary: PreviewSummary, target: PackageRef): Promise<boolean>;
  /** Aborted on Ctrl-C: the flow stops at the next step or poll, and turns admin mode off first. */
  interrupt: AbortSignal;
}

export const ADMIN_MODE_NEEDED = 'BMXAA0578E';
/** No route at the address (this service's 404 of an unknown path). */
const NOT_SERVED = 'EAS0001E';

/** Connection failures and 5xx answers are worth another attempt; a refusal is not. */
function retriable(error: unknown): boolean {
  return error instanceof EasClientError && (error.kind === 'connection' || error.status >= 500);
}

async function withRetries<T>(
  plan: MigrationPlan,
  reporter: MigrationReporter,
  what: string,
  call: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!retriable(error) || attempt >= plan.retries) throw error;
      reporter.warn(`${what}: ${(error as Error).message}; trying again (${attempt + 1}/${plan.retries})`);
      await sleep(plan.retryDelayMs * attempt);
    }
  }
}

/**
 * The target-side package of a distribution to the target's database, which its message names ("... distributed to
 * the database of target T as package 12."; docs/cli.md, "DATABASE targets"); undefined for a FILE target.
 */
export function databaseDistribution(
  plan: MigrationPlan,
  record: PackageRecord,
): { dmpackageid?: number } | undefined {
  if (plan.targetType === 'file') return undefined;
  const match = /to the database of target \S+ as package (\d+)/i.exec(record.distributionmessage ?? '');
  if (match) return { dmpackageid: Number(match[1]) };
  return plan.targetType === 'database' ? {} : undefined;
}

/** The steps `--dry-run` prints, in order. */
export function plannedSteps(plan: MigrationPlan): StepRecord[] {
  const steps: StepRecord[] = [
    {
      step: 'check-target',
      status: 'planned',
      detail:
        'the target answers, takes the key, is administered by it and runs a release with the migration operations',
    },
    { step: 'create', status: 'planned', detail: `package of definition ${plan.definition} on the source` },
    {
      step: 'distribute',
      status: 'planned',
      detail: plan.targetName ? `to target ${plan.targetName}` : 'to every target of the definition',
    },
  ];
  if (plan.targetType !== 'database') {
    const when = plan.targetType === 'auto' ? ' (skipped for a DATABASE target)' : '';
    steps.push({ step: 'download', status: 'planned', detail: `the package file from the source${when}` });
    steps.push({ step: 'upload', status: 'planned', detail: `the package file to the target${when}` });
  }
  steps.push(
    { step: 'preview', status: 'planned', detail: 'adds, changes and deletes per object on the target' },
    { step: 'confirm', status: 'planned', detail: plan.yes ? '--yes given' : 'asked on the terminal' },
    {
      step: 'deploy',
      status: 'planned',
      detail: plan.force ? 'on the target, over records changed there (--force)' : 'on the target',
    },
    {
      step: 'adminmode-on',
      status: 'planned',
      detail: `only if deploy answers ${ADMIN_MODE_NEEDED}: admin mode on the target, wait for state 1, completedeploy, admin mode off (always)`,
    },
    {
      step: 'cleanup',
      status: 'planned',
      detail: plan.cleanup === 'none' ? 'none' : `${plan.cleanup} the source package`,
    },
  );
  return steps;
}

/** One run of the flow: its plan and context, the outcome so far, the step under way. */
interface Run {
  plan: MigrationPlan;
  context: MigrationContext;
  outcome: MigrationOutcome;
  current: StepName;
  /** Whether this run asked for admin mode (it then turns it off again, whatever happens). */
  adminModeRequested: boolean;
  sourceRef?: PackageRef;
}

function startStep(run: Run, step: StepName, text: string): void {
  if (run.context.interrupt.aborted) throw new Interrupted();
  run.current = step;
  run.context.reporter.stepStarted(step, text);
}

function endStep(run: Run, record: StepRecord): void {
  run.outcome.steps.push(record);
  run.context.reporter.stepEnded(record);
}

/**
 * The deployment flow of docs/cli.md: create, distribute, download and upload (not for DATABASE targets), preview,
 * confirmation, deploy; when the deploy needs admin mode, admin mode on, wait for state 1, completedeploy. Admin
 * mode is turned off again whenever this run asked for it — after success, a failed step, a lost connection
 * (retried) or an interrupt — before anything else happens.
 */
export async function runMigration(
  plan: MigrationPlan,
  context: MigrationContext,
): Promise<MigrationOutcome> {
  const outcome: MigrationOutcome = {
    exitCode: EXIT.ok,
    steps: [],
    adminMode: { turnedOn: false, off: null },
  };
  if (plan.dryRun) {
    outcome.steps = plannedSteps(plan);
    for (const record of outcome.steps) context.reporter.stepEnded(record);
    return outcome;
  }
  const run: Run = { plan, context, outcome, current: 'create', adminModeRequested: false };
  try {
    await checkTarget(run);
    const targetRef = await movePackage(run);
    const summary = await previewStep(run, targetRef);
    await confirmStep(run, summary, targetRef);
    await deployStep(run, targetRef);
  } catch (error) {
    failedStep(run, error);
  } finally {
    if (run.adminModeRequested) outcome.adminMode.off = await turnAdminModeOff(plan, context, outcome);
  }

  if (outcome.adminMode.off === false) outcome.exitCode = EXIT.adminModeStillOn;
  if (outcome.exitCode === EXIT.ok && run.sourceRef && plan.cleanup !== 'none') {
    await cleanUp(plan, context, outcome, run.sourceRef);
  } else if (run.sourceRef) {
    await afterFailure(run, run.sourceRef);
  }
  return outcome;
}

/** The steps before the target holds the package: a failure in one of them leaves a half-made source package. */
const BEFORE_THE_TARGET: ReadonlySet<StepName> = new Set(['create', 'distribute', 'download', 'upload']);

/**
 * After a failure: a package that never reached the target is deleted from the source (nothing half-made is left);
 * one the target holds is kept for inspection. Either way the step says what is left and how to remove it.
 */
async function afterFailure(run: Run, ref: PackageRef): Promise<void> {
  const { source } = run.context;
  const remove = `eas migrate close --definition ${ref.pkgdefname} --package ${ref.dmpackageid} --delete`;
  const failed = run.outcome.steps.find((step) => step.status === 'failed');
  if (failed && BEFORE_THE_TARGET.has(failed.step)) {
    try {
      await source.packages.delete(ref);
      endStep(run, {
        step: 'cleanup',
        status: 'done',
        detail: `deleted package ${ref.dmpackageid}, which never reached the target, from the source`,
      });
    } catch (error) {
      endStep(run, {
        step: 'cleanup',
        status: 'failed',
        detail: `package ${ref.dmpackageid} is left on the source (${(error as Error).message}); remove it with \`${remove}\``,
      });
    }
    return;
  }
  endStep(run, {
    step: 'cleanup',
    status: 'skipped',
    detail: `package ${ref.dmpackageid} is kept on the source for inspection; remove it with \`${remove}\``,
  });
}

/** The target checked before anything is made on the source (`checkedTarget`, migrate-target-check.ts). */
async function checkTarget(run: Run): Promise<void> {
  startStep(run, 'check-target', 'checking the target');
  const detail = await checkedTarget(run.context.target);
  endStep(run, { step: 'check-target', status: 'done', detail });
}

/** Create and distribute on the source; download and upload unless a DATABASE target received it. */
async function movePackage(run: Run): Promise<PackageRef> {
  const { plan, outcome } = run;
  const { source, target, reporter } = run.context;
  startStep(run, 'create', `creating a package of ${plan.definition} on the source`);
  const created = await source.packages.create(plan.definition, plan.readme);
  outcome.sourcePackage = created;
  const sourceRef: PackageRef = {
    pkgdefname: created.pkgdefname ?? plan.definition,
    dmpackageid: Number(created.dmpackageid),
  };
  run.sourceRef = sourceRef;
  endStep(run, { step: 'create', status: 'done', detail: `package ${sourceRef.dmpackageid}` });

  startStep(run, 'distribute', 'distributing the package');
  const distributed = await source.packages.distribute(sourceRef, plan.targetName);
  outcome.sourcePackage = { ...created, ...distributed };
  endStep(run, { step: 'distribute', status: 'done', detail: distributed.distributionmessage ?? '' });

  let targetRef: PackageRef = sourceRef;
  const received = databaseDistribution(plan, distributed);
  if (received) {
    if (received.dmpackageid !== undefined) {
      targetRef = { pkgdefname: sourceRef.pkgdefname, dmpackageid: received.dmpackageid };
    }
    endStep(run, { step: 'download', status: 'skipped', detail: 'DATABASE target' });
    endStep(run, {
      step: 'upload',
      status: 'skipped',
      detail: `DATABASE target: package ${targetRef.dmpackageid}`,
    });
    return targetRef;
  }
  startStep(run, 'download', 'downloading the package file from the source');
  const file = await withRetries(plan, reporter, 'download', () => source.packages.download(sourceRef));
  const filename = file.filename ?? distributed.filename ?? `${plan.definition}-${sourceRef.dmpackageid}.zip`;
  endStep(run, { step: 'download', status: 'done', detail: `${filename}, ${file.bytes.length} bytes` });

  startStep(run, 'upload', 'uploading the package file to the target');
  const uploaded = (await target.packages.upload(filename, file.bytes, sentReporter(reporter))) as
    Partial<PackageRecord> | undefined;
  if (uploaded && uploaded.dmpackageid !== undefined) {
    targetRef = {
      pkgdefname: uploaded.pkgdefname ?? sourceRef.pkgdefname,
      dmpackageid: Number(uploaded.dmpackageid),
    };
  }
  endStep(run, { step: 'upload', status: 'done', detail: `package ${targetRef.dmpackageid} on the target` });
  return targetRef;
}

/** What the deployment would change, shown; none where the target offers no preview. */
async function previewStep(run: Run, targetRef: PackageRef): Promise<PreviewSummary> {
  const { reporter, target } = run.context;
  startStep(run, 'preview', 'reading what the deployment would change');
  try {
    const summary = previewSummary(await target.packages.preview(targetRef));
    reporter.preview(summary);
    const drifts = summary.rows.reduce((sum, row) => sum + row.drifts, 0);
    if (drifts > 0 && run.plan.force !== true)
      reporter.warn(
        `${drifts} record(s) changed on the target since the source last matched them: the deploy will be refused without --force`,
      );
    if (summary.refusals.length > 0) {
      const detail = `the target would refuse ${summary.refusals.length} record(s); nothing was deployed`;
      endStep(run, { step: 'preview', status: 'failed', detail });
      throw new StepFailure(EXIT.deployFailed, detail);
    }
    endStep(run, { step: 'preview', status: 'done', detail: previewCounts(summary.rows) });
    return summary;
  } catch (error) {
    // The deployed systems have no preview: their targets answer 404 and the flow goes on without one.
    if (
      !(error instanceof EasClientError) ||
      error.status !== 404 ||
      (error.reasonCode !== undefined && error.reasonCode !== NOT_SERVED)
    )
      throw error;
    endStep(run, { step: 'preview', status: 'skipped', detail: 'the target offers no preview' });
    return { rows: [], structural: [], adminmode: false, refusals: [], refusalGroups: [] };
  }
}

async function confirmStep(run: Run, summary: PreviewSummary, targetRef: PackageRef): Promise<void> {
  const { plan } = run;
  startStep(run, 'confirm', 'confirming the deployment');
  if (!plan.yes && !(await run.context.confirm(summary, targetRef))) {
    endStep(run, {
      step: 'confirm',
      status: 'failed',
      detail: 'not confirmed (use --yes where there is no terminal)',
    });
    throw new StepFailure(EXIT.notConfirmed, 'The deployment was not confirmed; nothing was deployed.');
  }
  endStep(run, { step: 'confirm', status: 'done', detail: plan.yes ? '--yes' : 'confirmed' });
}

/** The deploy; when it needs admin mode: admin mode on, wait for state 1, completedeploy. */
async function deployStep(run: Run, targetRef: PackageRef): Promise<void> {
  const { plan, outcome, context } = run;
  const { target } = context;
  startStep(run, 'deploy', 'deploying on the target');
  try {
    const deployed = await withProgress(run, targetRef, () =>
      target.packages.deploy(targetRef, { force: plan.force === true }),
    );
    endStep(run, { step: 'deploy', status: 'done', detail: String(deployed?.warningmsg ?? '') });
    return;
  } catch (error) {
    if (!(error instanceof EasClientError) || error.reasonCode !== ADMIN_MODE_NEEDED) throw error;
    endStep(run, {
      step: 'deploy',
      status: 'done',
      detail: `${ADMIN_MODE_NEEDED}: the deployment needs admin mode`,
    });
    // The error names the package to complete (errattrvalue of dmpackageid).
    const packageId = error.attrValue !== undefined ? Number(error.attrValue) : targetRef.dmpackageid;
    const pending: PackageRef = { pkgdefname: targetRef.pkgdefname, dmpackageid: packageId };

    startStep(run, 'adminmode-on', 'turning admin mode on on the target');
    run.adminModeRequested = true;
    outcome.adminMode.turnedOn = true;
    await target.adminMode.on({
      ...(plan.numsessions !== undefined && { numsessions: plan.numsessions }),
      ...(plan.logoutmin !== undefined && { logoutmin: plan.logoutmin }),
    });
    endStep(run, { step: 'adminmode-on', status: 'done' });

    startStep(run, 'adminmode-wait', 'waiting for admin mode (state 1)');
    await waitForAdminMode(plan, context);
    endStep(run, { step: 'adminmode-wait', status: 'done', detail: 'state 1' });

    startStep(run, 'completedeploy', `completing the deployment of package ${pending.dmpackageid}`);
    await target.packages.completeDeploy(pending, { force: plan.force === true });
    endStep(run, { step: 'completedeploy', status: 'done' });
  }
}

/** An upload's `onSent` that hands the bytes sent and their rate to the reporter; none when it shows no progress. */
function sentReporter(reporter: MigrationReporter): ((sent: number, total: number) => void) | undefined {
  if (!reporter.progress) return undefined;
  const started = Date.now();
  return (sent, total) =>
    reporter.progress?.('uploading', sent, total, sent / Math.max(0.001, (Date.now() - started) / 1000));
}

/**
 * A deploy call, with its progress polled meanwhile (`GET dm/package`, answered during the deploy) and handed to the
 * reporter as counts and a rate; a poll that fails is passed over (the deploy's own answer decides).
 */
async function withProgress<T>(run: Run, ref: PackageRef, call: () => Promise<T>): Promise<T> {
  const { reporter, target } = run.context;
  if (!reporter.progress) return call();
  const started = Date.now();
  let settled = false;
  const poll = async () => {
    while (!settled) {
      await sleep(Math.min(run.plan.pollIntervalMs, 1000)).catch(() => undefined);
      if (settled) return;
      const record = await target.packages.record(ref).catch(() => undefined);
      const match = /Deploying: ([\d,]+) of ([\d,]+)/.exec(String(record?.progressstatus ?? ''));
      if (!match || settled) continue;
      const done = Number(match[1]!.replace(/,/g, ''));
      const seconds = Math.max(0.001, (Date.now() - started) / 1000);
      reporter.progress?.('deploying', done, Number(match[2]!.replace(/,/g, '')), done / seconds);
    }
  };
  const polling = poll();
  try {
    return await call();
  } finally {
    settled = true;
    await polling;
  }
}

/** The outcome of a step that failed: its exit code and record; an unknown error goes on up. */
function failedStep(run: Run, error: unknown): void {
  const { outcome, current } = run;
  if (error instanceof Interrupted) {
    outcome.exitCode = EXIT.interrupted;
    endStep(run, { step: current, status: 'failed', detail: 'interrupted' });
  } else if (error instanceof StepFailure) {
    outcome.exitCode = error.exitCode;
    if (!outcome.steps.some((step) => step.step === current && step.status === 'failed')) {
      endStep(run, { step: current, status: 'failed', detail: error.message });
    }
  } else if (error instanceof EasClientError) {
    outcome.exitCode =
      (current === 'deploy' || current === 'completedeploy') && error.kind === 'server'
        ? EXIT.deployFailed
        : exitCodeOf(error);
    outcome.error = {
      reasonCode: error.reasonCode ?? null,
      message: error.message,
      status: error.status,
      request: error.request,
    };
    endStep(run, { step: current, status: 'failed', detail: reasonAndMessage(error) });
  } else {
    throw error;
  }
}

async function waitForAdminMode(plan: MigrationPlan, context: MigrationContext): Promise<void> {
  const { target, reporter, interrupt } = context;
  const started = Date.now();
  const totalSeconds = Math.ceil(plan.adminModeTimeoutMs / 1000);
  for (;;) {
    let state: number | undefined;
    try {
      state = await target.adminMode.state();
    } catch (error) {
      if (!retriable(error)) throw error;
      reporter.warn(`admin mode state: ${(error as Error).message}; polling again`);
    }
    if (state === 1) return;
    const left = plan.adminModeTimeoutMs - (Date.now() - started);
    if (left <= 0) {
      throw new StepFailure(
        EXIT.adminModeTimeout,
        `Admin mode did not reach state 1 within ${totalSeconds} s (--adminmode-timeout).`,
      );
    }
    reporter.waiting(Math.ceil(left / 1000), totalSeconds, state);
    await sleep(Math.min(plan.pollIntervalMs, left), interrupt);
  }
}

/**
 * `eas migrate deploy`: the deploy step alone, of a package the target holds; when it needs admin mode: on, wait,
 * completedeploy, and off again whatever happens (as in the whole flow).
 */
export async function deployAlone(
  plan: MigrationPlan,
  context: MigrationContext,
  targetRef: PackageRef,
): Promise<MigrationOutcome> {
  const outcome: MigrationOutcome = {
    exitCode: EXIT.ok,
    steps: [],
    adminMode: { turnedOn: false, off: null },
  };
  const run: Run = { plan, context, outcome, current: 'deploy', adminModeRequested: false };
  try {
    await deployStep(run, targetRef);
  } catch (error) {
    failedStep(run, error);
  } finally {
    if (run.adminModeRequested) outcome.adminMode.off = await turnAdminModeOff(plan, context, outcome);
  }
  if (outcome.adminMode.off === false) outcome.exitCode = EXIT.adminModeStillOn;
  return outcome;
}

/** Admin mode off, retried through lost connections; true when the target confirmed it. */
async function turnAdminModeOff(
  plan: MigrationPlan,
  context: MigrationContext,
  outcome: MigrationOutcome,
): Promise<boolean> {
  const { target, reporter } = context;
  reporter.stepStarted('adminmode-off', 'turning admin mode off on the target');
  try {
    await withRetries(plan, reporter, 'admin mode off', () => target.adminMode.off());
    const record: StepRecord = { step: 'adminmode-off', status: 'done' };
    outcome.steps.push(record);
    reporter.stepEnded(record);
    return true;
  } catch (error) {
    const record: StepRecord = {
      step: 'adminmode-off',
      status: 'failed',
      detail: `${(error as Error).message}. ADMIN MODE IS STILL ON: run \`eas adminmode off\` against the target now.`,
    };
    outcome.steps.push(record);
    reporter.stepEnded(record);
    return false;
  }
}

async function cleanUp(
  plan: MigrationPlan,
  context: MigrationContext,
  outcome: MigrationOutcome,
  ref: PackageRef,
): Promise<void> {
  const { source, reporter } = context;
  reporter.stepStarted('cleanup', `${plan.cleanup === 'close' ? 'closing' : 'deleting'} the source package`);
  try {
    if (plan.cleanup === 'close') await source.packages.close(ref);
    else await source.packages.delete(ref);
    const record: StepRecord = {
      step: 'cleanup',
      status: 'done',
      detail: `${plan.cleanup} package ${ref.dmpackageid}`,
    };
    outcome.steps.push(record);
    reporter.stepEnded(record);
  } catch (error) {
    // The deployment itself succeeded; a cleanup failure is reported, and changes the exit code.
    const record: StepRecord = { step: 'cleanup', status: 'failed', detail: (error as Error).message };
    outcome.steps.push(record);
    reporter.stepEnded(record);
    outcome.exitCode = exitCodeOf(error);
  }
}
