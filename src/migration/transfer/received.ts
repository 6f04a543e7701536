import { PACKAGE_STATUS, describeCounts } from '../packages.js';
import type { PackageValues } from '../repository.js';
import type { Manifest } from './package-file.js';

/** The target-side record of a package as it arrives (uploaded, or written by a DATABASE distribution): DEPLOY_NEW. */
export function receivedValues(manifest: Manifest, filename: string | null): PackageValues {
  return {
    pkgdefname: manifest.pkgdefname,
    source: manifest.source,
    package: manifest.package,
    type: manifest.type,
    status: PACKAGE_STATUS.deployNew,
    filename,
    readme: manifest.readme ?? null,
    createby: manifest.createby,
    changeby: manifest.createby,
    progressstatus: `Received: ${describeCounts(manifest.entries)}`,
    distributionmessage: null,
    side: 'TARGET',
  };
}
