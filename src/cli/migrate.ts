import { EasClientError, type EasClient, type PackageRecord, type PackageRef } from '../client/index.js';
import { EXIT, exitCodeOf, type ExitCode } from './exit-codes.js';

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

/** One line of the preview: what deploying would change, per object. */
export interface PreviewRow {
  object: string;
  adds: number;
  changes: number;
  deletes: number;
  /** Records the target holds in another state than the source expected (a deploy without --force is refused). */
  drifts: number;
}

/** How the flow shows its progress (terminal bar, plain lines, or collected for --json). */
export interface MigrationReporter {
  stepStarted(step: StepName, text: string): void;
  stepEnded(record: StepRecord): void;
  /** Called on every poll while waiting for admin mode. */
  waiting(secondsLeft: number, totalSeconds: number, state: number | undefined): void;
  preview(rows: readonly PreviewRow[]): void;
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
  confirm(rows: readonly PreviewRow[]): Promise<boolean>;
  /** Aborted on Ctrl-C: the flow stops at the next step or poll, and turns admin mode off first. */
  interrupt: AbortSignal;
}

export const ADMIN_MODE_NEEDED = 'BMXAA0578E';
/** No route at the address (this service's 404 of an unknown path). */
const NOT_SERVED = 'EAS0001E';

/** A step the flow could not complete, with the exit code it ends with. */
class StepFailure extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    readonly clientError?: EasClientError,
  ) {
    super(message);
  }
}

class Interrupted extends Error {}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Interrupted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(new Interrupted());
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

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
 * The preview rows of the target's answer: `objects` with the keys to add and delete and the changes, per object
 * structure (docs/cli.md, "Preview").
 */
export function previewRows(answer: unknown): PreviewRow[] {
  const objects =
    typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>).objects : undefined;
  if (!Array.isArray(objects)) return [];
  const size = (value: unknown) =>
    Array.isArray(value) ? value.length : typeof value === 'number' ? value : 0;
  return objects.map((entry: Record<string, unknown>) => ({
    object: String(entry.objectstructure ?? entry.object ?? ''),
    adds: size(entry.add),
    changes: size(entry.change),
    deletes: size(entry.delete),
    drifts: size(entry.drift),
  }));
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
  const { source, target, reporter, interrupt } = context;
  const outcome: MigrationOutcome = {
    exitCode: EXIT.ok,
    steps: [],
    adminMode: { turnedOn: false, off: null },
  };
  if (plan.dryRun) {
    outcome.steps = plannedSteps(plan);
    for (const record of outcome.steps) reporter.stepEnded(record);
    return outcome;
  }
  let current = 'create' as StepName;
  const start = (step: StepName, text: string) => {
    if (interrupt.aborted) throw new Interrupted();
    current = step;
    reporter.stepStarted(step, text);
  };
  const end = (record: StepRecord) => {
    outcome.steps.push(record);
    reporter.stepEnded(record);
  };
  let adminModeRequested = false;
  let sourceRef: PackageRef | undefined;

  try {
    start('create', `creating a package of ${plan.definition} on the source`);
    const created = await source.packages.create(plan.definition, plan.readme);
    outcome.sourcePackage = created;
    sourceRef = {
      pkgdefname: created.pkgdefname ?? plan.definition,
      dmpackageid: Number(created.dmpackageid),
    };
    end({ step: 'create', status: 'done', detail: `package ${sourceRef.dmpackageid}` });

    start('distribute', 'distributing the package');
    const distributed = await source.packages.distribute(sourceRef, plan.targetName);
    outcome.sourcePackage = { ...created, ...distributed };
    end({ step: 'distribute', status: 'done', detail: distributed.distributionmessage ?? '' });

    let targetRef: PackageRef = sourceRef;
    const received = databaseDistribution(plan, distributed);
    if (received) {
      if (received.dmpackageid !== undefined) {
        targetRef = { pkgdefname: sourceRef.pkgdefname, dmpackageid: received.dmpackageid };
      }
      end({ step: 'download', status: 'skipped', detail: 'DATABASE target' });
      end({ step: 'upload', status: 'skipped', detail: `DATABASE target: package ${targetRef.dmpackageid}` });
    } else {
      start('download', 'downloading the package file from the source');
      const file = await withRetries(plan, reporter, 'download', () => source.packages.download(sourceRef!));
      const filename =
        file.filename ?? distributed.filename ?? `${plan.definition}-${sourceRef.dmpackageid}.zip`;
      end({ step: 'download', status: 'done', detail: `${filename}, ${file.bytes.length} bytes` });

      start('upload', 'uploading the package file to the target');
      const uploaded = (await target.packages.upload(filename, file.bytes)) as
        Partial<PackageRecord> | undefined;
      if (uploaded && uploaded.dmpackageid !== undefined) {
        targetRef = {
          pkgdefname: uploaded.pkgdefname ?? sourceRef.pkgdefname,
          dmpackageid: Number(uploaded.dmpackageid),
        };
      }
      end({ step: 'upload', status: 'done', detail: `package ${targetRef.dmpackageid} on the target` });
    }

    start('preview', 'reading what the deployment would change');
    let rows: PreviewRow[] = [];
    try {
      rows = previewRows(await target.packages.preview(targetRef));
      reporter.preview(rows);
      const drifts = rows.reduce((sum, row) => sum + row.drifts, 0);
      if (drifts > 0 && plan.force !== true)
        reporter.warn(
          `${drifts} record(s) changed on the target since the source last matched them: the deploy will be refused without --force`,
        );
      end({ step: 'preview', status: 'done', detail: `${rows.length} object(s)` });
    } catch (error) {
      // The deployed systems have no preview: their targets answer 404 and the flow goes on without one.
      if (
        !(error instanceof EasClientError) ||
        error.status !== 404 ||
        (error.reasonCode !== undefined && error.reasonCode !== NOT_SERVED)
      )
        throw error;
      end({ step: 'preview', status: 'skipped', detail: 'the target offers no preview' });
    }

    start('confirm', 'confirming the deployment');
    if (!plan.yes && !(await context.confirm(rows))) {
      end({
        step: 'confirm',
        status: 'failed',
        detail: 'not confirmed (use --yes where there is no terminal)',
      });
      throw new StepFailure(EXIT.notConfirmed, 'The deployment was not confirmed; nothing was deployed.');
    }
    end({ step: 'confirm', status: 'done', detail: plan.yes ? '--yes' : 'confirmed' });

    start('deploy', 'deploying on the target');
    try {
      const deployed = await target.packages.deploy(targetRef, { force: plan.force === true });
      end({ step: 'deploy', status: 'done', detail: String(deployed?.warningmsg ?? '') });
    } catch (error) {
      if (!(error instanceof EasClientError) || error.reasonCode !== ADMIN_MODE_NEEDED) throw error;
      end({
        step: 'deploy',
        status: 'done',
        detail: `${ADMIN_MODE_NEEDED}: the deployment needs admin mode`,
      });
      // The error names the package to complete (errattrvalue of dmpackageid).
      const packageId = error.attrValue !== undefined ? Number(error.attrValue) : targetRef.dmpackageid;
      const pending: PackageRef = { pkgdefname: targetRef.pkgdefname, dmpackageid: packageId };

      start('adminmode-on', 'turning admin mode on on the target');
      adminModeRequested = true;
      outcome.adminMode.turnedOn = true;
      await target.adminMode.on({
        ...(plan.numsessions !== undefined && { numsessions: plan.numsessions }),
        ...(plan.logoutmin !== undefined && { logoutmin: plan.logoutmin }),
      });
      end({ step: 'adminmode-on', status: 'done' });

      start('adminmode-wait', 'waiting for admin mode (state 1)');
      await waitForAdminMode(plan, context);
      end({ step: 'adminmode-wait', status: 'done', detail: 'state 1' });

      start('completedeploy', `completing the deployment of package ${pending.dmpackageid}`);
      await target.packages.completeDeploy(pending, { force: plan.force === true });
      end({ step: 'completedeploy', status: 'done' });
    }
  } catch (error) {
    if (error instanceof Interrupted) {
      outcome.exitCode = EXIT.interrupted;
      end({ step: current, status: 'failed', detail: 'interrupted' });
    } else if (error instanceof StepFailure) {
      outcome.exitCode = error.exitCode;
      if (!outcome.steps.some((step) => step.step === current && step.status === 'failed')) {
        end({ step: current, status: 'failed', detail: error.message });
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
      end({
        step: current,
        status: 'failed',
        detail: `${error.reasonCode ? `${error.reasonCode}: ` : ''}${error.message}`,
      });
    } else {
      throw error;
    }
  } finally {
    if (adminModeRequested) outcome.adminMode.off = await turnAdminModeOff(plan, context, outcome);
  }

  if (outcome.adminMode.off === false) outcome.exitCode = EXIT.adminModeStillOn;
  if (outcome.exitCode === EXIT.ok && sourceRef && plan.cleanup !== 'none') {
    await cleanUp(plan, context, outcome, sourceRef);
  } else if (plan.cleanup !== 'none') {
    end({ step: 'cleanup', status: 'skipped', detail: 'the package is kept for inspection after a failure' });
  }
  return outcome;
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
