import { processIo } from './io.js';
import { runCli } from './program.js';

/** `eas` (bin/eas.js loads this): runs the command line and leaves with its exit code. */
process.exitCode = await runCli(process.argv.slice(2), processIo());
