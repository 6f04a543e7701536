// Run by `npm run build` after tsc (package.json): the PGlite cluster a first start copies (docs/startup.md).
import { buildClusterTemplate, TEMPLATE_DIR } from './cluster-template.js';

if (await buildClusterTemplate()) process.stdout.write(`PGlite cluster template made in ${TEMPLATE_DIR}\n`);
