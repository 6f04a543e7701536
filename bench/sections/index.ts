import type { Section } from '../lib/types.js';
import { apiKeySection } from './apikey.js';
import { auditSection } from './audit.js';
import { createSection } from './create.js';
import { getPropertySection } from './get-property.js';
import { memberSection } from './member.js';
import { querySection } from './query.js';
import { releaseSection } from './release.js';
import { scaleSection } from './scale.js';
import { sessionSection } from './session.js';

/**
 * Every section, in the order `npm run bench` runs them. A new section is one file in this folder exporting a
 * `Section` (see query.ts) and one line here; its servers go in bench/servers/ (eas.ts serves the service on the
 * benchmark schema, bare-static.ts serves a fixed JSON body on one route).
 */
export const sections: readonly Section[] = [
  querySection,
  sessionSection,
  getPropertySection,
  apiKeySection,
  createSection,
  memberSection,
  scaleSection,
  auditSection,
  releaseSection,
];

/**
 * Sections that are specified but not written yet. Naming one on the command line says so instead of failing as
 * unknown; move it to `sections` (and delete it here) when its file lands.
 */
export const plannedSections: ReadonlyArray<Pick<Section, 'name' | 'issue' | 'summary'>> = [];
