import { Command, Option } from 'commander';
import type { EasClient } from '../client/index.js';
import { CliError, CliExit, EXIT } from './exit-codes.js';
import { plain, type CliIo, type CliStream } from './io.js';
import {
  plannedSteps,
  runMigration,
  type MigrationPlan,
  type MigrationReporter,
  type StepRecord,
} from './migrate.js';
import type { PreviewSummary } from './migrate-preview.js';
import { confirmation, previewText } from './migrate-text.js';
import { migrateStepCommands } from './migrate-steps.js';
import { writeJson } from './output.js';
import { drawBar, ProgressLines, progressText, type ProgressLabel } from './migrate-progress.js';
import { clientFor, integer, minutes, type GlobalOptions } from './common.js';
import { migrateBackoutCommand } from './migrate-backout.js';

interface MigrateOptions {
  source?: string;
  target?: string;
  definition?: string;
  targetName?: string;
  readme: string;
  targetType: 'file' | 'database' | 'auto';
  sourceApikeyEnv?: string;
  targetApikeyEnv?: string;
  numsessions?: number;
  logoutmin?: number;
  adminmodeTimeout: number;
  pollInterval: number;
  retries: number;
  cleanup: 'close' | 'delete' | 'none';
  yes?: boolean;
  dryRun?: boolean;
  force?: boolean;
}

function detailOf(record: StepRecord): string {
  return record.detail ? `: ${record.detail}` : '';
}

/** Plain lines, one per event: for pipes and log files (no control characters). */
class LineReporter implements MigrationReporter {
  private lastWaitLine = 0;
  private readonly progressLines: ProgressLines;
  constructor(private readonly out: CliStream) {
    this.progressLines = new ProgressLines(out);
  }
  stepStarted(): void {}
  stepEnded(record: StepRecord): void {
    this.out.write(plain(`${record.step} ${record.status}${detailOf(record)}`) + '\n');
  }
  waiting(secondsLeft: number, _total: number, state: number | undefined): void {
    // One line every 10 s is enough for a log.
    const now = Date.now();
    if (now - this.lastWaitLine < 10_000 && this.lastWaitLine !== 0) return;
    this.lastWaitLine = now;
    this.out.write(`waiting for admin mode: state ${state ?? 'unknown'}, ${secondsLeft} s left\n`);
  }
  preview(summary: PreviewSummary): void {
    this.out.write(previewText(summary));
  }
  progress(label: ProgressLabel, done: number, total: number, rate: number): void {
    this.progressLines.report(label, done, total, rate);
  }
  warn(text: string): void {
    this.out.write(plain(`warning: ${text}`) + '\n');
  }
}

/** A progress bar over the steps and a countdown while waiting, redrawn in place on a terminal. */
class TerminalReporter implements MigrationReporter {
  private done = 0;
  constructor(
    private readonly out: CliStream,
    private readonly total: number,
  ) {}
  private draw(text: string, fraction: number): void {
    drawBar(this.out, text, fraction);
  }
  stepStarted(_step: string, text: string): void {
    this.draw(`${this.done + 1}/${this.total} ${text}`, this.done / this.total);
  }
  stepEnded(record: StepRecord): void {
    this.done++;
    const mark = record.status === 'failed' ? 'FAILED' : record.status;
    this.out.write(`\r\u001b[2K${plain(`${record.step} ${mark}${detailOf(record)}`)}\n`);
  }
  waiting(secondsLeft: number, totalSeconds: number, state: number | undefined): void {
    this.draw(
      `admin mode ${state === 2 ? 'turning on' : `state ${state ?? '?'}`}: ${secondsLeft} s left`,
      1 - secondsLeft / totalSeconds,
    );
  }
  preview(summary: PreviewSummary): void {
    this.out.write(`\r\u001b[2K${previewText(summary)}`);
  }
  progress(label: ProgressLabel, done: number, total: number, rate: number): void {
    this.draw(`${label} ${progressText(label, done, total, rate)}`, total === 0 ? 1 : done / total);
  }
  warn(text: string): void {
    this.out.write(`\r\u001b[2K${plain(`warning: ${text}`)}\n`);
  }
}

/** Nothing while running (stdout carries one JSON document at the end); warnings go to stderr. */
class QuietReporter implements MigrationReporter {
  constructor(private readonly err: CliStream) {}
  stepStarted(): void {}
  stepEnded(): void {}
  waiting(): void {}
  preview(): void {}
  warn(text: string): void {
    this.err.write(plain(`warning: ${text}`) + '\n');
  }
}

export function migrateCommand(io: CliIo): Command {
  const command = withMigrateOptions(new Command('migrate'));
  // The steps on their own, for scripted pipelines (docs/cli.md, "The steps on their own").
  for (const step of migrateStepCommands(io)) command.addCommand(step);
  command.addCommand(migrateBackoutCommand(io));
  return command.action(async (options: MigrateOptions, command: Command) =>
    runMigrate(io, options, command),
  );
}

/** The command's options and help (docs/cli.md, "eas migrate"). */
function withMigrateOptions(command: Command): Command {
  return command
    .description(
      'deploy a migration package from a source to a target, admin mode included (always turned off again)',
    )
    .option('--definition <name>', 'package definition (pkgdefname); required')
    .option('--source <url>', 'context root of the source deployment (default: --url / EAS_URL)')
    .option('--target <url>', 'context root of the target deployment (default: --url / EAS_URL)')
    .option('--target-name <name>', 'distribution target (default: every target of the definition)')
    .option('--readme <text>', 'memo of the package', '')
    .addOption(
      new Option(
        '--target-type <type>',
        'file: download and upload; database: the target reads the package itself',
      )
        .choices(['file', 'database', 'auto'])
        .default('auto'),
    )
    .option(
      '--source-apikey-env <NAME>',
      'variable holding the source API key (default: EAS_SOURCE_APIKEY, EAS_APIKEY)',
    )
    .option(
      '--target-apikey-env <NAME>',
      'variable holding the target API key (default: EAS_TARGET_APIKEY, EAS_APIKEY)',
    )
    .option('--numsessions <n>', 'admin mode: administrative sessions allowed', integer)
    .option(
      '--logoutmin <minutes>',
      'admin mode: minutes before other users are logged out (fractions allowed)',
      minutes,
    )
    .option('--adminmode-timeout <seconds>', 'how long to wait for admin mode state 1', integer, 900)
    .option('--poll-interval <seconds>', 'seconds between admin mode state polls', integer, 2)
    .option(
      '--retries <n>',
      'attempts of admin mode off and state polls when the connection fails',
      integer,
      8,
    )
    .addOption(
      new Option('--cleanup <action>', 'what to do with the source package after a successful deployment')
        .choices(['close', 'delete', 'none'])
        .default('close'),
    )
    .option('--yes', 'deploy without asking (required when there is no terminal)')
    .option('--dry-run', 'print the steps and call nothing')
    .option('--force', 'deploy even over records changed on the target since the source last matched them')
    .addHelpText(
      'after',
      '\nExample:\n' +
        '  EAS_SOURCE_APIKEY=... EAS_TARGET_APIKEY=... eas migrate --source http://dev:7001/maximo \\\n' +
        '    --target http://prod:7001/maximo --definition ASSETCFG --numsessions 5 --logoutmin 1 --yes\n' +
        '\nExit codes: 0 deployed; 3 credentials refused; 4 a step refused; 5 no connection; 6 deploy failed\n' +
        '(reason code printed); 7 not confirmed; 8 admin mode not on in time; 9 admin mode could not be turned\n' +
        'off; 130 interrupted (admin mode turned off first). See docs/cli.md.',
    );
}

/** The run's plan from the command's options. */
function planOf(options: MigrateOptions, definition: string): MigrationPlan {
  return {
    definition,
    targetName: options.targetName,
    readme: options.readme,
    targetType: options.targetType,
    cleanup: options.cleanup,
    numsessions: options.numsessions,
    logoutmin: options.logoutmin,
    adminModeTimeoutMs: options.adminmodeTimeout * 1000,
    pollIntervalMs: Math.max(1, options.pollInterval) * 1000,
    retries: Math.max(1, options.retries),
    retryDelayMs: 1000,
    yes: options.yes === true,
    dryRun: options.dryRun === true,
    force: options.force === true,
  };
}

async function runMigrate(io: CliIo, options: MigrateOptions, command: Command): Promise<void> {
  const global = command.optsWithGlobals<GlobalOptions & MigrateOptions>();
  if (options.definition === undefined)
    throw new CliError("required option '--definition <name>' not specified", EXIT.usage);
  const plan = planOf(options, options.definition);
  if (plan.dryRun) {
    const steps = plannedSteps(plan);
    if (global.json) writeJson(io.stdout, { dryRun: true, steps });
    else for (const step of steps) io.stdout.write(plain(`${step.step}: ${step.detail ?? ''}`) + '\n');
    return;
  }
  const keyFor = (side: 'SOURCE' | 'TARGET', named: string | undefined) => {
    if (named !== undefined) return named;
    if (global.apikeyEnv !== undefined) return global.apikeyEnv;
    return io.env[`EAS_${side}_APIKEY`] ? `EAS_${side}_APIKEY` : undefined;
  };
  const source: EasClient = clientFor(io, global, options.source, keyFor('SOURCE', options.sourceApikeyEnv));
  const target: EasClient = clientFor(io, global, options.target, keyFor('TARGET', options.targetApikeyEnv));

  const reporter: MigrationReporter = global.json
    ? new QuietReporter(io.stderr)
    : io.stderr.isTTY
      ? new TerminalReporter(io.stderr, plannedSteps(plan).length - 1)
      : new LineReporter(io.stderr);

  const interrupt = new AbortController();
  const stopListening = io.onInterrupt(() => {
    if (!interrupt.signal.aborted) {
      io.stderr.write('\ninterrupted: stopping; admin mode is turned off first if this run turned it on\n');
      interrupt.abort();
    }
  });
  let outcome;
  try {
    outcome = await runMigration(plan, {
      source,
      target,
      reporter,
      interrupt: interrupt.signal,
      confirm: async (summary, ref) => {
        if (global.json || !io.stderr.isTTY) return false;
        const url = options.target ?? global.url ?? io.env.EAS_URL ?? 'the target';
        return io.confirm(confirmation(summary, { url, ref }, plan));
      },
    });
  } finally {
    stopListening();
    await Promise.all([source.logout().catch(() => undefined), target.logout().catch(() => undefined)]);
  }
  if (global.json) writeJson(io.stdout, outcome);
  else {
    const failed = outcome.steps.find((step) => step.status === 'failed');
    if (outcome.exitCode === EXIT.ok) io.stdout.write('deployed\n');
    else if (failed) io.stdout.write(plain(`failed at ${failed.step}${detailOf(failed)}`) + '\n');
  }
  if (outcome.exitCode !== EXIT.ok) throw new CliExit(outcome.exitCode);
}

export { CliExit } from './exit-codes.js';
