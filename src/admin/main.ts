import { main } from './cli.js';

/**
 * `npm run admin -- <command>` (`node dist/bundle/admin.js`, bundled from this file by `npm run build`; tests run it
 * from the sources through tsx): the shell's administration command, src/admin/cli.ts.
 */
main().catch((error: unknown) => {
  process.stderr.write(`eas admin: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
