// The single-file bundles `npm run build` makes of compiled entry points (docs/startup.md), one per process the
// product starts: a bundle loads without resolving and linking the few hundred modules of `dist/`, which for a
// short command is most of its time (the shell's administration command: 1.0 s from `dist/`, 0.3 s bundled).
//
//   node scripts/bundle.mjs <entry.js>=<outfile.js> [...]
//
// The bench bundles its own compiled copy of the sources the same way (bench/README.md, "Backup").
import process from 'node:process';
import { build } from 'esbuild';

// What stays in node_modules, and why: docs/startup.md.
const EXTERNAL = [
  '@electric-sql/pglite',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  'ldapts',
  'openid-client',
  'jose',
  '@node-saml/node-saml',
  'yazl',
  'yauzl',
  'pg-native',
];

// CommonJS dependencies call `require`, which an ES module bundle does not have.
const REQUIRE_BANNER =
  "import { createRequire as createRequireOfBundle } from 'node:module'; " +
  'const require = createRequireOfBundle(import.meta.url);';

const pairs = process.argv.slice(2).map((argument) => argument.split('='));
if (pairs.length === 0 || pairs.some((pair) => pair.length !== 2)) {
  process.stderr.write('usage: node scripts/bundle.mjs <entry.js>=<outfile.js> [...]\n');
  process.exit(2);
}
for (const [entry, outfile] of pairs) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    external: EXTERNAL,
    banner: { js: REQUIRE_BANNER },
  });
}
