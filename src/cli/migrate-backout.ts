import { Command } from 'commander';
import type { EasClient } from '../client/index.js';
import { clientFor, integer, type GlobalOptions } from './common.js';
import { CliError, EXIT } from './exit-codes.js';
import { plain, type CliIo } from './io.js';
import { renderTable, writeJson } from './output.js';

interface BackoutOptions {
  definition: string;
  package: number;
  target?: string;
  targetApikeyEnv?: string;
  numsessions?: number;
  logoutmin?: number;
  adminmodeTimeout: number;
  pollInterval: number;
  yes?: boolean;
  force?: boolean;
}

/** What `POST /dm/preview` with `backout: true` answers (docs/migration.md, "Back-out"). */
interface BackoutPreview {
  objects: Array<{
    objectstructure: string;
    add: string[];
    change: unknown[];
    delete: string[];
    drift: string[];
  }>;
  drifts: Array<{
    objectstructure: string;
    key: string;
    attributes: Record<string, { deployed: unknown; current: unknown }>;
  }>;
  driftcount: number;
  structural: string[];
  adminmode: boolean;
}

/**
 * `eas migrate backout`: a deployed package backed out on its target (docs/cli.md, "eas migrate backout"). Its
 * settings are `eas migrate`'s own options (`--definition`, `--target`, `--yes`, `--force`, admin mode's), which
 * commander reads on `migrate` wherever they stand; only `--package` is the step's.
 */
export function migrateBackoutCommand(io: CliIo): Command {
  return new Command('backout')
    .description(
      'back out a deployed package on its target: every record, property, right and attribute restored',
    )
    .requiredOption('--package <id>', 'the target-side package id (dmpackageid)', integer)
    .addHelpText(
      'after',
      '\nAlso takes these options of eas migrate: --definition (required), --target, --target-apikey-env, --yes,\n' +
        '--force (restore records changed on the target since the deploy), --numsessions, --logoutmin,\n' +
        '--adminmode-timeout, --poll-interval (admin mode, when the package added custom attributes).\n' +
        '\nExample:\n  EAS_TARGET_APIKEY=... eas migrate backout --target http://prod:7001/maximo --definition ASSETCFG \\\n' +
        '    --package 42 --yes\n\nExit codes: 0 backed out; 4 refused (records changed since the deploy: see the list, or\n' +
        '--force); 7 not confirmed; 8 admin mode not on in time; 9 admin mode could not be turned off. See docs/cli.md.',
    )
    .action(async (_options: object, command: Command) =>
      runBackout(io, command.optsWithGlobals<GlobalOptions & BackoutOptions>()),
    );
}

async function runBackout(io: CliIo, options: GlobalOptions & BackoutOptions): Promise<void> {
  const global = options;
  const apikeyEnv =
    options.targetApikeyEnv ??
    global.apikeyEnv ??
    (io.env.EAS_TARGET_APIKEY ? 'EAS_TARGET_APIKEY' : undefined);
  const client = clientFor(io, global, options.target, apikeyEnv);
  const ref = { pkgdefname: options.definition.toUpperCase(), dmpackageid: options.package };
  try {
    const preview = (await client.packages.previewBackout(ref)) as unknown as BackoutPreview;
    if (!global.json) io.stderr.write(describePreview(preview));
    if (preview.driftcount > 0 && options.force !== true)
      throw new CliError(
        `${preview.driftcount} record(s) changed since the deploy; nothing was backed out (--force restores them anyway).`,
        EXIT.refused,
      );
    const target = client.http.url('').toString();
    const question = `Back out package ${ref.dmpackageid} of ${ref.pkgdefname} on ${target}${
      preview.adminmode ? ', turning admin mode on' : ''
    }?`;
    if (options.yes !== true && (global.json || !(await io.confirm(question))))
      throw new CliError(
        'not confirmed: nothing was backed out (--yes backs out without asking).',
        EXIT.notConfirmed,
      );
    const answer = await underAdminMode(client, preview.adminmode, options, () =>
      client.packages.backout(ref, { force: options.force === true }),
    );
    if (global.json) writeJson(io.stdout, { backedOut: true, ...answer, preview });
    else io.stdout.write(plain(`${answer.warningmsg ?? 'backed out'}`) + '\n');
  } finally {
    await client.logout().catch(() => undefined);
  }
}

/** The preview as the confirmation shows it: per object the records restored, and the configuration undone. */
function describePreview(preview: BackoutPreview): string {
  const rows = preview.objects.map((object) => ({
    object: object.objectstructure,
    restores: object.add.length,
    changes: object.change.length,
    deletes: object.delete.length,
    drifts: object.drift.length,
  }));
  const lines = [renderTable(rows, ['object', 'restores', 'changes', 'deletes', 'drifts'])];
  if (preview.structural.length > 0)
    lines.push(`configuration undone (needs admin mode): ${preview.structural.join(', ')}\n`);
  for (const drift of preview.drifts) {
    const values = Object.entries(drift.attributes)
      .map(
        ([name, { deployed, current }]) =>
          `${name} deployed ${JSON.stringify(deployed)}, now ${JSON.stringify(current)}`,
      )
      .join('; ');
    lines.push(
      plain(`changed since the deploy: ${drift.objectstructure} ${drift.key}${values ? `: ${values}` : ''}`) +
        '\n',
    );
  }
  return lines.join('');
}

/** Runs `work` with admin mode on when `needed` (turned off again however it ends), else as it is. */
async function underAdminMode<T>(
  client: EasClient,
  needed: boolean,
  options: BackoutOptions,
  work: () => Promise<T>,
): Promise<T> {
  if (!needed) return work();
  await client.adminMode.on({
    ...(options.numsessions !== undefined && { numsessions: options.numsessions }),
    ...(options.logoutmin !== undefined && { logoutmin: options.logoutmin }),
  });
  try {
    const deadline = Date.now() + options.adminmodeTimeout * 1000;
    while ((await client.adminMode.state()) !== 1) {
      if (Date.now() > deadline)
        throw new CliError(
          'admin mode did not reach state 1 in time; nothing was backed out.',
          EXIT.adminModeTimeout,
        );
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, options.pollInterval) * 1000));
    }
    return await work();
  } finally {
    await client.adminMode.off().catch(() => {
      throw new CliError(
        'admin mode could not be turned off: turn it off now (eas adminmode off).',
        EXIT.adminModeStillOn,
      );
    });
  }
}
