import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Command } from 'commander';
import type { EasClient, PackageRef } from '../client/index.js';
import { clientFor, integer, minutes, type GlobalOptions } from './common.js';
import { CliError, CliExit, EXIT } from './exit-codes.js';
import { plain, type CliIo } from './io.js';
import { deployAlone, type MigrationReporter } from './migrate.js';
import { uploadProgress } from './migrate-progress.js';
import { previewCounts, previewSummary, type PreviewSummary } from './migrate-preview.js';
import { confirmation, previewText } from './migrate-text.js';
import { writeJson } from './output.js';

/*
 * The steps of `eas migrate` on their own, for scripted pipelines (docs/cli.md, "The steps on their own"): each talks
 * to one deployment (`--source` or `--target`, else `--url`), prints what the next step needs (a package id, a file),
 * and exits as the flow would at that step.
 */

interface StepOptions {
  definition: string;
  package?: number;
  source?: string;
  target?: string;
}

type Side = 'SOURCE' | 'TARGET';

/** The client of one side: its address and key (`EAS_SOURCE_APIKEY` / `EAS_TARGET_APIKEY`, else the common ones). */
function sideClient(io: CliIo, command: Command, side: Side): { client: EasClient; url: string } {
  const global = command.optsWithGlobals<GlobalOptions & StepOptions>();
  const url = side === 'SOURCE' ? global.source : global.target;
  const apikeyEnv = global.apikeyEnv ?? (io.env[`EAS_${side}_APIKEY`] ? `EAS_${side}_APIKEY` : undefined);
  const client = clientFor(io, global, url, apikeyEnv);
  return { client, url: url ?? global.url ?? io.env.EAS_URL ?? '' };
}

/**
 * A step's options with those of `eas migrate` (which reads the flow's options, such as `--definition`, wherever
 * they stand on the line); `--definition` is required.
 */
function merged<T extends StepOptions>(command: Command): T {
  const options = command.optsWithGlobals<T>();
  if (options.definition === undefined)
    throw new CliError("required option '--definition <name>' not specified", EXIT.usage);
  return options;
}

function packageRef(options: StepOptions): PackageRef {
  if (options.package === undefined)
    throw new CliError("required option '--package <id>' not specified", EXIT.usage);
  return { pkgdefname: options.definition, dmpackageid: options.package };
}

async function withClient<T>(client: EasClient, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    await client.logout().catch(() => undefined);
  }
}

const jsonOf = (command: Command): boolean => command.optsWithGlobals<GlobalOptions>().json === true;

function stepCommand(name: string, description: string, side: Side): Command {
  const command = new Command(name)
    .description(description)
    .option('--definition <name>', 'package definition (pkgdefname); required');
  return side === 'SOURCE'
    ? command.option('--source <url>', 'context root of the source (default: --url / EAS_URL)')
    : command.option('--target <url>', 'context root of the target (default: --url / EAS_URL)');
}

/** `create`: a package created and distributed on the source; a distribution that fails leaves no package. */
function createStep(io: CliIo): Command {
  return stepCommand('create', 'create and distribute a package on the source; prints its id', 'SOURCE')
    .option('--readme <text>', 'memo of the package', '')
    .option('--target-name <name>', 'distribution target (default: every target of the definition)')
    .action(async (_options: StepOptions & { readme: string; targetName?: string }, command: Command) => {
      const options = merged<StepOptions & { readme: string; targetName?: string }>(command);
      const { client } = sideClient(io, command, 'SOURCE');
      await withClient(client, async () => {
        const created = await client.packages.create(options.definition, options.readme);
        const ref = {
          pkgdefname: created.pkgdefname ?? options.definition,
          dmpackageid: Number(created.dmpackageid),
        };
        let distributed;
        try {
          distributed = await client.packages.distribute(ref, options.targetName);
        } catch (error) {
          // Nothing half-made is left on the source: the package that could not be distributed is deleted.
          await client.packages.delete(ref).catch(() => {
            io.stderr.write(
              `eas: package ${ref.dmpackageid} is left on the source: remove it with \`eas migrate close --definition ${ref.pkgdefname} --package ${ref.dmpackageid} --delete\`\n`,
            );
          });
          throw error;
        }
        if (jsonOf(command)) writeJson(io.stdout, { ...created, ...distributed });
        else io.stdout.write(`${ref.dmpackageid}\n`);
        io.stderr.write(
          plain(`create done: package ${ref.dmpackageid}: ${distributed.distributionmessage ?? ''}`) + '\n',
        );
      });
    });
}

/** `download`: the package file, written to `--output` (default: the name the source gives it). */
function downloadStep(io: CliIo): Command {
  return stepCommand('download', 'download a package file from the source; prints the file name', 'SOURCE')
    .option('--package <id>', 'package id on the source', integer)
    .option('--output <file>', 'where to write the file (default: the name the source gives)')
    .action(async (_options: StepOptions & { output?: string }, command: Command) => {
      const options = merged<StepOptions & { output?: string }>(command);
      const ref = packageRef(options);
      const { client } = sideClient(io, command, 'SOURCE');
      await withClient(client, async () => {
        const file = await client.packages.download(ref);
        const path = options.output ?? basename(file.filename ?? `${ref.pkgdefname}-${ref.dmpackageid}.zip`);
        await writeFile(path, file.bytes);
        if (jsonOf(command)) writeJson(io.stdout, { file: path, bytes: file.bytes.length });
        else io.stdout.write(`${path}\n`);
      });
    });
}

/** `upload`: a package file to the target; prints the target's package id (which preview and deploy take). */
function uploadStep(io: CliIo): Command {
  return new Command('upload')
    .description("upload a package file to the target; prints the target's package id")
    .argument('<file>', 'the package file (.zip)')
    .option('--target <url>', 'context root of the target (default: --url / EAS_URL)')
    .action(async (file: string, _options: StepOptions, command: Command) => {
      const { client } = sideClient(io, command, 'TARGET');
      await withClient(client, async () => {
        // Progress goes to stderr: stdout carries the package id (or the JSON answer) for scripts.
        const onSent = uploadProgress(io.stderr, jsonOf(command));
        const uploaded = (await client.packages.upload(basename(file), await readFile(file), onSent)) as
          Record<string, unknown> | undefined;
        if (jsonOf(command)) writeJson(io.stdout, uploaded ?? {});
        else io.stdout.write(`${String(uploaded?.dmpackageid ?? '')}\n`);
      });
    });
}

/** `preview`: what the deploy would do; exit 6 when it would refuse records. */
function previewStep(io: CliIo): Command {
  return stepCommand('preview', 'what deploying a package on the target would do', 'TARGET')
    .option('--package <id>', 'package id on the target', integer)
    .action(async (_options: StepOptions, command: Command) => {
      const options = merged<StepOptions>(command);
      const ref = packageRef(options);
      const { client } = sideClient(io, command, 'TARGET');
      const answer = await withClient(client, () => client.packages.preview(ref));
      const summary = previewSummary(answer);
      if (jsonOf(command)) writeJson(io.stdout, answer);
      else io.stdout.write(previewText(summary) + `${previewCounts(summary.rows)}\n`);
      if (summary.refusals.length > 0) throw new CliExit(EXIT.deployFailed);
    });
}

/** `deploy`: the deploy, confirmed (`--yes`, or asked on a terminal), with admin mode when the package needs it. */
function deployStep(io: CliIo): Command {
  return stepCommand(
    'deploy',
    'deploy a package on the target (admin mode on and off when it needs it)',
    'TARGET',
  )
    .option('--package <id>', 'package id on the target', integer)
    .option('--numsessions <n>', 'admin mode: administrative sessions allowed', integer)
    .option('--logoutmin <minutes>', 'admin mode: minutes before other users are logged out', minutes)
    .option('--adminmode-timeout <seconds>', 'how long to wait for admin mode state 1', integer, 900)
    .option('--yes', 'deploy without asking (required when there is no terminal)')
    .option('--force', 'deploy even over records changed on the target since the source last matched them')
    .action(async (_options: DeployStepOptions, command: Command) =>
      runDeployStep(io, merged<DeployStepOptions>(command), command),
    );
}

interface DeployStepOptions extends StepOptions {
  numsessions?: number;
  logoutmin?: number;
  adminmodeTimeout: number;
  yes?: boolean;
  force?: boolean;
}

async function runDeployStep(io: CliIo, options: DeployStepOptions, command: Command): Promise<void> {
  const ref = packageRef(options);
  const { client, url } = sideClient(io, command, 'TARGET');
  const json = jsonOf(command);
  await withClient(client, async () => {
    if (options.yes !== true) {
      const summary: PreviewSummary = previewSummary(await client.packages.preview(ref));
      io.stderr.write(previewText(summary));
      if (json || !io.stderr.isTTY || !(await io.confirm(confirmation(summary, { url, ref }, options)))) {
        io.stderr.write('eas: not confirmed (use --yes where there is no terminal); nothing was deployed\n');
        throw new CliExit(EXIT.notConfirmed);
      }
    }
    const reporter: MigrationReporter = {
      stepStarted: () => undefined,
      stepEnded: (record) =>
        io.stderr.write(
          plain(`${record.step} ${record.status}${record.detail ? `: ${record.detail}` : ''}`) + '\n',
        ),
      waiting: () => undefined,
      preview: () => undefined,
      warn: (text) => io.stderr.write(plain(`warning: ${text}`) + '\n'),
    };
    const plan = {
      definition: ref.pkgdefname,
      readme: '',
      targetType: 'file' as const,
      cleanup: 'none' as const,
      numsessions: options.numsessions,
      logoutmin: options.logoutmin,
      adminModeTimeoutMs: options.adminmodeTimeout * 1000,
      pollIntervalMs: 2000,
      retries: 8,
      retryDelayMs: 1000,
      yes: true,
      dryRun: false,
      force: options.force === true,
    };
    const context = {
      source: client,
      target: client,
      reporter,
      confirm: async () => true,
      interrupt: new AbortController().signal,
    };
    const outcome = await deployAlone(plan, context, ref);
    if (json) writeJson(io.stdout, outcome);
    else if (outcome.exitCode === EXIT.ok)
      io.stdout.write(`${outcome.steps.find((step) => step.step === 'deploy')?.detail ?? 'deployed'}\n`);
    if (outcome.exitCode !== EXIT.ok) throw new CliExit(outcome.exitCode);
  });
}

/** `close`: the package closed on the source (`--delete`: deleted). */
function closeStep(io: CliIo): Command {
  return stepCommand('close', 'close (or with --delete, delete) a package on the source', 'SOURCE')
    .option('--package <id>', 'package id on the source', integer)
    .option('--delete', 'delete the package instead of closing it')
    .action(async (_options: StepOptions & { delete?: boolean }, command: Command) => {
      const options = merged<StepOptions & { delete?: boolean }>(command);
      const ref = packageRef(options);
      const { client } = sideClient(io, command, 'SOURCE');
      await withClient(client, async () => {
        if (options.delete) await client.packages.delete(ref);
        else await client.packages.close(ref);
      });
      io.stdout.write(`${options.delete ? 'deleted' : 'closed'} package ${ref.dmpackageid}\n`);
    });
}

/** The step commands under `eas migrate` (`backout` has its own file). */
export function migrateStepCommands(io: CliIo): Command[] {
  return [createStep(io), downloadStep(io), uploadStep(io), previewStep(io), deployStep(io), closeStep(io)];
}
