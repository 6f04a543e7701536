import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { keyStatus } from './apikey-status.js';
import { backupCommand } from './backup-command.js';
import { clientFor, integer, minutes, type GlobalOptions } from './common.js';
import { EasClientError, type EasClient, type Member } from '../client/index.js';
import { CliError, EXIT, exitCodeOf, type ExitCode } from './exit-codes.js';
import { plain, type CliIo } from './io.js';
import { CliExit, migrateCommand } from './migrate-command.js';
import {
  columnsOf,
  csvLine,
  renderRecord,
  renderTable,
  writeJson,
  writeRows,
  type OutputFormat,
} from './output.js';

function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('Not valid JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidArgumentError('Must be a JSON object, e.g. {"siteid":"BEDFORD"}.');
  }
  return parsed as Record<string, unknown>;
}

function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

/** Ends the session a login opened; a failure to do so does not change the command's result. */
async function finish(client: EasClient): Promise<void> {
  await client.logout().catch(() => undefined);
}

/** Runs `work` with a client of the command's global options, logged out after it whatever happens. */
async function withClient(
  io: CliIo,
  command: Command,
  work: (client: EasClient, global: GlobalOptions) => Promise<void>,
): Promise<void> {
  const global = globals(command);
  const client = clientFor(io, global);
  try {
    await work(client, global);
  } finally {
    await finish(client);
  }
}

function formatOf(options: GlobalOptions & { format?: OutputFormat }): OutputFormat {
  return options.json ? 'json' : (options.format ?? 'table');
}

const formatOption = () =>
  new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table');

/** Prints a failure on stderr (and, with --json, as a JSON object on stdout) and answers its exit code. */
export function report(io: CliIo, error: unknown, json: boolean): ExitCode {
  if (error instanceof EasClientError) {
    const code = exitCodeOf(error);
    // Messages of the deployed systems start with their code (`BMXAA9549E - ...`) or not; print the code once.
    const reason =
      error.reasonCode && !error.message.startsWith(error.reasonCode) ? `${error.reasonCode}: ` : '';
    io.stderr.write(
      plain(
        `eas: ${reason}${error.message} (${error.request.method} ${error.request.url}, HTTP ${error.status})`,
      ) + '\n',
    );
    if (json) {
      writeJson(io.stdout, {
        error: {
          kind: error.kind,
          reasonCode: error.reasonCode ?? null,
          message: error.message,
          status: error.status,
          request: error.request,
        },
        exitCode: code,
      });
    }
    return code;
  }
  const code = error instanceof CliError ? error.exitCode : EXIT.failure;
  if (error instanceof CliExit) return code;
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(plain(`eas: ${message}`) + '\n');
  if (json) writeJson(io.stdout, { error: { kind: 'cli', message }, exitCode: code });
  return code;
}

function apikeyCommand(io: CliIo): Command {
  const apikey = new Command('apikey').description(
    'manage API keys (your own, or any user as an administrator)',
  );
  apikey
    .command('create')
    .description("create (or regenerate) an API key; prints the key's value")
    .option('--user <userid>', 'create the key for this user (administrators, MXAPIAPIKEY)')
    .option('--expiration <minutes>', 'minutes until the key expires; -1 never', integer, -1)
    .addHelpText(
      'after',
      '\nExample:\n  EAS_USER=MAXADMIN EAS_PASSWORD=... eas --url http://host/maximo apikey create --user WILSON',
    )
    .action(async (options: { user?: string; expiration: number }, command: Command) =>
      withClient(io, command, async (client, global) => {
        const value = options.user
          ? (await client.apikeys.createFor(options.user, options.expiration)).apikey
          : await client.apikeys.create(options.expiration);
        if (global.json) writeJson(io.stdout, { userid: options.user?.toUpperCase() ?? null, apikey: value });
        else io.stdout.write(`${String(value)}\n`);
      }),
    );
  apikey
    .command('revoke')
    .description('revoke your own API key')
    .action(async (_options: object, command: Command) =>
      withClient(io, command, async (client, global) => {
        const revoked = await client.apikeys.revoke();
        if (global.json) writeJson(io.stdout, { revoked });
        else io.stdout.write(revoked ? 'revoked\n' : 'no key to revoke\n');
      }),
    );
  apikey
    .command('list')
    .description('list API key records (administrators); key values are not shown')
    .option('--user <userid>', 'only the key of this user')
    .addOption(formatOption())
    .action(async (options: { user?: string; format: OutputFormat }, command: Command) =>
      withClient(io, command, async (client, global) => {
        const rows = (await client.apikeys.list(options.user)).map((row) => ({
          ...row,
          status: keyStatus(row),
        }));
        writeRows(io.stdout, formatOf({ ...global, format: options.format }), rows, [
          'userid',
          'apikeytokenid',
          'status',
          'expiration',
          'creationdate',
          'exposedinurl',
        ]);
      }),
    );
  apikey
    .command('delete')
    .description("delete a user's API key record (administrators)")
    .argument('<userid>', 'owner of the key')
    .action(async (userid: string, _options: object, command: Command) =>
      withClient(io, command, async (client, global) => {
        const [record] = await client.apikeys.list(userid);
        if (!record || typeof record.href !== 'string') {
          throw new CliError(`${userid.toUpperCase()} has no API key.`, EXIT.refused);
        }
        await client.apikeys.delete(record.href);
        if (global.json) writeJson(io.stdout, { deleted: true, userid: record.userid });
        else io.stdout.write(`deleted the key of ${String(record.userid)}\n`);
      }),
    );
  return apikey;
}

function propCommand(io: CliIo): Command {
  const prop = new Command('prop').description('read and set system properties');
  prop
    .command('get')
    .description('the value of one or more properties')
    .argument('<names...>', 'property names')
    .action(async (names: string[], _options: object, command: Command) => {
      const global = globals(command);
      const client = clientFor(io, global);
      try {
        if (names.length === 1) {
          const value = await client.properties.get(names[0]!);
          if (global.json) writeJson(io.stdout, { [names[0]!]: value });
          else io.stdout.write(`${plain(value)}\n`);
        } else {
          const values = await client.properties.getMany(names);
          if (global.json) writeJson(io.stdout, values);
          else io.stdout.write(renderRecord(values));
        }
      } finally {
        await finish(client);
      }
    });
  prop
    .command('set')
    .description('set a property (administrators)')
    .argument('<name>', 'property name')
    .argument('<value>', 'new value ("" for no value)')
    .option('--server <name>', 'server the value is for', 'COMMON')
    .action(async (name: string, value: string, options: { server: string }, command: Command) => {
      const global = globals(command);
      const client = clientFor(io, global);
      try {
        const answer = await client.properties.set(name, value === '' ? null : value, options.server);
        if (global.json) writeJson(io.stdout, answer ?? { propName: name, propValue: value });
        else io.stdout.write(renderRecord(answer ?? { propName: name, propValue: value }));
      } finally {
        await finish(client);
      }
    });
  prop
    .command('describe')
    .description('registry entry, stored and applied values of a property (administrators)')
    .argument('<name>', 'property name')
    .action(async (name: string, _options: object, command: Command) => {
      const global = globals(command);
      const client = clientFor(io, global);
      try {
        const description = await client.properties.describe(name);
        if (global.json) {
          writeJson(io.stdout, description);
          return;
        }
        const scalars: Member = {};
        const lists: [string, Member[]][] = [];
        for (const [key, value] of Object.entries(description)) {
          if (Array.isArray(value)) lists.push([key, value as Member[]]);
          else scalars[key] = value;
        }
        io.stdout.write(renderRecord(scalars));
        for (const [key, rows] of lists) {
          io.stdout.write(`\n${key}:\n${renderTable(rows, columnsOf(rows))}`);
        }
      } finally {
        await finish(client);
      }
    });
  return prop;
}

interface CollectionOptions {
  where?: string;
  select?: string;
  orderBy?: string;
  pageSize?: number;
  all?: boolean;
  format: OutputFormat;
}

/** Prints a collection query: the first page, or with --all every page as it arrives. */
async function printCollection(
  io: CliIo,
  global: GlobalOptions,
  options: CollectionOptions,
  pages: AsyncIterable<{ member: Member[] }>,
): Promise<void> {
  const format = formatOf({ ...global, format: options.format });
  const wanted =
    options.select && !/[{*.]/.test(options.select)
      ? options.select.split(',').map((name) => name.trim())
      : undefined;
  if (format === 'table') {
    const rows: Member[] = [];
    for await (const page of pages) {
      rows.push(...page.member);
      if (!options.all) break;
    }
    io.stdout.write(renderTable(rows, columnsOf(rows, wanted)));
    return;
  }
  // JSON and CSV stream page by page, so that --all over a large collection holds one page in memory. Nothing is
  // written before the first page arrived, so that a refused query leaves stdout to the error object.
  let columns: string[] | undefined;
  let opened = false;
  let first = true;
  try {
    for await (const page of pages) {
      if (!opened && format === 'json') io.stdout.write('[');
      opened = true;
      for (const member of page.member) {
        if (format === 'json') {
          io.stdout.write(`${first ? '\n' : ',\n'}${JSON.stringify(member)}`);
        } else {
          columns ??= columnsOf(page.member, wanted);
          if (first) io.stdout.write(csvLine(columns));
          io.stdout.write(csvLine(columns.map((column) => member[column])));
        }
        first = false;
      }
      if (!options.all) break;
    }
  } catch (error) {
    if (!opened) throw error;
    // A later page failed: the array is closed so that what was printed still parses; the failure goes to stderr.
    if (format === 'json') io.stdout.write(first ? ']\n' : '\n]\n');
    throw new OutputStarted(error);
  }
  if (format === 'json') io.stdout.write(first ? '[]\n' : '\n]\n');
  else if (first && wanted) io.stdout.write(csvLine(wanted));
}

/** A failure after output was written: it is reported on stderr only. */
class OutputStarted extends Error {
  constructor(readonly failure: unknown) {
    super('output started');
  }
}

function collectionOptions(command: Command): Command {
  return command
    .option('--where <clause>', 'oslc.where filter, e.g. \'status="OPERATING"\'')
    .option('--select <attributes>', 'oslc.select, e.g. assetnum,status,description')
    .option('--order-by <attributes>', 'oslc.orderBy, e.g. -assetnum,+siteid')
    .option('--page-size <n>', 'members per page', integer)
    .option('--all', 'read every page (default: the first page only)')
    .addOption(formatOption());
}

function queryCommand(io: CliIo): Command {
  return collectionOptions(
    new Command('query')
      .description('query a collection of an object structure')
      .argument('<os>', 'object structure, e.g. mxapiasset'),
  )
    .addHelpText(
      'after',
      '\nExample:\n  eas query mxapiasset --where \'siteid="BEDFORD"\' --select assetnum,status --order-by -assetnum --all --format csv',
    )
    .action(async (objectStructure: string, options: CollectionOptions, command: Command) => {
      const global = globals(command);
      const client = clientFor(io, global);
      try {
        if (options.select !== undefined) await checkSelect(client, objectStructure, options.select);
        const query = client.query(objectStructure, {
          ...(options.where !== undefined && { where: options.where }),
          select: options.select ?? '*',
          ...(options.orderBy !== undefined && { orderBy: options.orderBy }),
          ...(options.pageSize !== undefined && { pageSize: options.pageSize }),
        });
        await printCollection(io, global, options, query);
      } finally {
        await finish(client);
      }
    });
}

/**
 * Refuses a `--select` naming an attribute the object structure does not have (the server would leave it out
 * silently, and the output would show an empty column): the names at the top level, before any `{`.
 */
async function checkSelect(client: EasClient, objectStructure: string, select: string): Promise<void> {
  const meta = await client.apiMeta(objectStructure);
  const known = new Set([...meta.attributes, ...meta.children].map((entry) => entry.name.toLowerCase()));
  let depth = 0;
  let name = '';
  const names: string[] = [];
  for (const character of `${select},`) {
    if (character === '{') depth += 1;
    if (character === '}') depth -= 1;
    if (depth === 0 && character === ',') {
      names.push(name.trim());
      name = '';
    } else if (depth === 0 && character !== '}') name += character;
  }
  const unknown = names
    .map((entry) =>
      entry
        .replace(/^[a-z_]+:/i, '')
        .split('.')[0]!
        .toLowerCase(),
    )
    .filter((entry) => entry !== '' && entry !== '*' && entry !== 'rel' && !known.has(entry));
  if (unknown.length > 0)
    throw new CliError(
      `--select names ${unknown.join(', ')}, which ${meta.name} does not have (see \`eas query\` with --select '*').`,
      EXIT.usage,
    );
}

function lookupCommand(io: CliIo): Command {
  return collectionOptions(
    new Command('lookup')
      .description('the valid values of an attribute (getlist~<attr>)')
      .argument('<os>', 'object structure, e.g. mxapiasset')
      .argument('<attr>', 'attribute, e.g. location')
      .option(
        '--record <id>',
        'rest id or unique id of the record (default: zombie, no record; newmbo: a new one)',
      )
      .option('--child <relation/id>', 'a child record of --record, e.g. assetmeter/0-12')
      .option(
        '--setupdata <json>',
        'values set on the record first, e.g. \'{"siteid":"NASHUA"}\'',
        jsonObject,
      ),
  )
    .addHelpText(
      'after',
      '\nExample:\n  eas lookup mxapiasset location --setupdata \'{"siteid":"NASHUA"}\' --select location,description',
    )
    .action(
      async (
        objectStructure: string,
        attribute: string,
        options: CollectionOptions & { record?: string; child?: string; setupdata?: Record<string, unknown> },
        command: Command,
      ) => {
        const global = globals(command);
        const client = clientFor(io, global);
        let child: { relation: string; id: string } | undefined;
        if (options.child !== undefined) {
          const [relation, ...rest] = options.child.split('/');
          if (!relation || rest.length === 0)
            throw new CliError('--child must be <relation>/<id>.', EXIT.usage);
          child = { relation, id: rest.join('/') };
        }
        try {
          const query = client.lookup(objectStructure, attribute, {
            ...(options.record !== undefined && { record: options.record }),
            ...(child && { child }),
            ...(options.setupdata && { setupdata: options.setupdata }),
            ...(options.where !== undefined && { where: options.where }),
            select: options.select ?? '*',
            ...(options.orderBy !== undefined && { orderBy: options.orderBy }),
            ...(options.pageSize !== undefined && { pageSize: options.pageSize }),
          });
          await printCollection(io, global, options, query);
        } finally {
          await finish(client);
        }
      },
    );
}

const STATE_NAMES: Record<number, string> = { 0: 'off', 1: 'on', 2: 'turning on' };

function adminmodeCommand(io: CliIo): Command {
  const adminmode = new Command('adminmode').description('turn admin mode on or off, or show its state');
  adminmode
    .command('on')
    .description('start turning admin mode on (see `state`; `eas migrate` waits by itself)')
    .option('--numsessions <n>', 'administrative sessions allowed', integer)
    .option('--logoutmin <minutes>', 'minutes before other users are logged out (fractions allowed)', minutes)
    .action(async (options: { numsessions?: number; logoutmin?: number }, command: Command) => {
      const global = globals(command);
      const client = clientFor(io, global);
      try {
        await client.adminMode.on(options);
        const state = await client.adminMode.state();
        if (global.json) writeJson(io.stdout, { state });
        else io.stdout.write(`admin mode: ${STATE_NAMES[state] ?? String(state)} (${state})\n`);
      } finally {
        await finish(client);
      }
    });
  adminmode
    .command('off')
    .description('turn admin mode off')
    .action(async (_options: object, command: Command) => {
      const global = globals(command);
      const client = clientFor(io, global);
      try {
        await client.adminMode.off();
        const state = await client.adminMode.state();
        if (global.json) writeJson(io.stdout, { state });
        else io.stdout.write(`admin mode: ${STATE_NAMES[state] ?? String(state)} (${state})\n`);
      } finally {
        await finish(client);
      }
    });
  adminmode
    .command('state')
    .description('the admin mode state: 0 off, 1 on, 2 turning on')
    .action(async (_options: object, command: Command) => {
      const global = globals(command);
      const client = clientFor(io, global);
      try {
        const state = await client.adminMode.state();
        if (global.json) writeJson(io.stdout, { state });
        else io.stdout.write(`admin mode: ${STATE_NAMES[state] ?? String(state)} (${state})\n`);
      } finally {
        await finish(client);
      }
    });
  return adminmode;
}

/** The `eas` command tree. Output goes through `io` so that tests run it in-process. */
export function buildProgram(io: CliIo): Command {
  const program = new Command('eas')
    .description(
      'Command-line client of the Enterprise Asset Service (and of deployments speaking its interface)',
    )
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .option(
      '--url <address>',
      'address of the context root, e.g. http://127.0.0.1:7001/maximo (default: EAS_URL)',
    )
    .option(
      '--apikey-env <NAME>',
      'name of the environment variable holding the API key (default: EAS_APIKEY)',
    )
    .addOption(
      new Option(
        '--auth <scheme>',
        'login scheme with EAS_USER and EAS_PASSWORD (default: EAS_AUTH, else maxauth)',
      ).choices(['apikey', 'maxauth', 'basic', 'form']),
    )
    .addOption(new Option('--api-root <root>', 'API root').choices(['oslc', 'api']).default('oslc'))
    .option('--timeout <seconds>', 'time limit of each request', '60')
    .option('--json', 'machine-readable output: JSON on stdout, errors included')
    .addHelpText(
      'after',
      '\nCredentials come from the environment only: EAS_APIKEY (or the variable named by --apikey-env), or\n' +
        'EAS_USER and EAS_PASSWORD. They are never printed. Exit codes: see docs/cli.md.',
    );
  program.addCommand(apikeyCommand(io));
  program.addCommand(propCommand(io));
  program.addCommand(lookupCommand(io));
  program.addCommand(queryCommand(io));
  program.addCommand(adminmodeCommand(io));
  program.addCommand(migrateCommand(io));
  program.addCommand(backupCommand(io));
  // Settings given above reach the commands added with addCommand only when copied.
  const inherit = (command: Command) => {
    command.copyInheritedSettings(program);
    command.commands.forEach(inherit);
  };
  program.commands.forEach(inherit);
  return program;
}

/** Runs `eas` with these arguments (without `node` and the script); answers the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  const json = argv.includes('--json');
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end with exit code 0; every parse failure is a usage error.
      if (error.exitCode === 0) return EXIT.ok;
      return EXIT.usage;
    }
    if (error instanceof OutputStarted) return report(io, error.failure, false);
    return report(io, error, json);
  }
}
