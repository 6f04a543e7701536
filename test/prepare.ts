// Builds the PGlite template once before the test files start in parallel (each would otherwise build its own).
import { pgliteTemplate, TEST_DATABASE_URL } from './helpers/storage.js';

if (!TEST_DATABASE_URL) await pgliteTemplate();
