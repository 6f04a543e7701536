import type { PackageRef } from '../client/index.js';
import { plain } from './io.js';
import { previewCounts, type PreviewSummary, type RefusalGroup } from './migrate-preview.js';
import { renderTable } from './output.js';

/**
 * The preview as printed: the table per object, then the structural changes, admin mode and one line per distinct
 * refusal: how many records, of which structures, the reason and its remedy once (docs/cli.md, "eas migrate").
 */
export function previewText(summary: PreviewSummary): string {
  const lines = [
    renderTable(
      summary.rows.map((row) => ({ ...row })),
      ['object', 'adds', 'changes', 'deletes', 'unchanged', 'refused', 'drifts'],
    ).trimEnd(),
  ];
  if (summary.structural.length > 0) lines.push(`structural changes: ${summary.structural.join(', ')}`);
  if (summary.adminmode) lines.push('admin mode: needed (turned on for the deploy, and off again)');
  for (const group of summary.refusalGroups) lines.push(plain(refusalLine(group)));
  return `${lines.join('\n')}\n`;
}

/**
 * `refused: 145 records (MXAPIASSET 145, e.g. MXAPIASSET assetnum=A1, siteid=BEDFORD): <reason> Remedy: <remedy>`;
 * a single record is named by its key.
 */
function refusalLine(group: RefusalGroup): string {
  const what =
    group.count === 1 && group.examples.length === 1
      ? group.examples[0]!
      : `${group.count} records (${group.objects.map((entry) => `${entry.object} ${entry.count}`).join(', ')}` +
        `${group.examples.length > 0 ? `; e.g. ${group.examples.join('; ')}` : ''})`;
  return `refused: ${what}: ${group.reason}${group.remedy === '' ? '' : ` Remedy: ${group.remedy}`}`;
}

/**
 * The question before a deploy: the target, the package, the counts, the structural changes and the admin mode the
 * run will turn on (docs/cli.md, "eas migrate").
 */
export function confirmation(
  summary: PreviewSummary,
  target: { url: string; ref: PackageRef },
  adminMode: { numsessions?: number | undefined; logoutmin?: number | undefined },
): string {
  const structural =
    summary.structural.length > 0
      ? `structural changes ${summary.structural.join(', ')}`
      : 'no structural changes';
  const settings = [
    adminMode.numsessions !== undefined ? `numsessions ${adminMode.numsessions}` : '',
    adminMode.logoutmin !== undefined ? `logoutmin ${adminMode.logoutmin}` : '',
  ].filter((text) => text !== '');
  const admin = summary.adminmode
    ? `admin mode will be turned ON on ${target.url}${settings.length > 0 ? ` (${settings.join(', ')})` : ''} and off again`
    : 'admin mode not needed';
  return plain(
    `Deploy package ${target.ref.dmpackageid} of ${target.ref.pkgdefname} to ${target.url}: ${previewCounts(summary.rows)}; ${structural}; ${admin}?`,
  );
}
