import type { PackageRef } from '../client/index.js';
import { plain } from './io.js';
import { previewCounts, type PreviewSummary } from './migrate-preview.js';
import { renderTable } from './output.js';

/** The preview as printed: the table per object, then the structural changes, admin mode and every refusal. */
export function previewText(summary: PreviewSummary): string {
  const lines = [
    renderTable(
      summary.rows.map((row) => ({ ...row })),
      ['object', 'adds', 'changes', 'deletes', 'unchanged', 'refused', 'drifts'],
    ).trimEnd(),
  ];
  if (summary.structural.length > 0) lines.push(`structural changes: ${summary.structural.join(', ')}`);
  if (summary.adminmode) lines.push('admin mode: needed (turned on for the deploy, and off again)');
  for (const refusal of summary.refusals)
    lines.push(plain(`refused: ${refusal.object} ${refusal.key}: ${refusal.reason}`));
  return `${lines.join('\n')}\n`;
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
