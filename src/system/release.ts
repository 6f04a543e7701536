import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
  license?: string;
};

/** This service's version (package.json). */
export const PACKAGE_VERSION = pkg.version;
/** This service's licence (package.json). */
export const PACKAGE_LICENSE = pkg.license ?? 'UNLICENSED';

/**
 * Release level of the deployed systems whose interface this service offers (docs/compatibility.md, "Service
 * endpoints"): 7.6.1.3, the level of the migration operations. Clients read the level from the start of `maxupg`
 * (a `V8` there makes some take the server for a standalone MAS 8 and change their cookie handling).
 */
export const RELEASE_LEVEL = '7613';

/** `maxupg` of the login answer and the API home: `V<release level>-<package version>`, e.g. `V7613-0.1.0`. */
export const MAXUPG = `V${RELEASE_LEVEL}-${PACKAGE_VERSION}`;

export const PRODUCT_NAME = 'Enterprise Asset Service';
