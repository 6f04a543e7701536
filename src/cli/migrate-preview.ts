import type { EasClientError } from '../client/index.js';

/*
 * The target's preview as `eas migrate` shows it (docs/cli.md, "eas migrate"): counts per object structure, the
 * structural changes, whether admin mode is needed, and every record the deploy would refuse.
 */

/** One line of the preview: what deploying would change, per object. */
export interface PreviewRow {
  object: string;
  adds: number;
  changes: number;
  deletes: number;
  /** Records the target holds in another state than the source expected (a deploy without --force is refused). */
  drifts: number;
  /** Records equal to the target's: left as they are. */
  unchanged: number;
  /** Records the deploy would refuse (it then writes nothing). */
  refused: number;
}

/** The target's preview as the flow shows it: per object, the structural changes, admin mode, the refusals. */
export interface PreviewSummary {
  rows: PreviewRow[];
  /** Custom attributes the deploy adds or changes (`ADD ASSET.MIGRATED`). */
  structural: string[];
  /** Whether the deploy needs admin mode (the flow turns it on, and off again). */
  adminmode: boolean;
  /** Every record the deploy would refuse, with the reason it would give. */
  refusals: Array<{ object: string; key: string; reason: string }>;
  /** The refusals grouped by reason (and remedy): what is printed, one line per distinct refusal. */
  refusalGroups: RefusalGroup[];
}

/** Refusals that share their reason and remedy, told once with their count (docs/cli.md, "eas migrate"). */
export interface RefusalGroup {
  reason: string;
  /** Where the refusal is fixed; empty when the target does not say (a target without `refusalgroups`). */
  remedy: string;
  count: number;
  /** Per object structure, how many. */
  objects: Array<{ object: string; count: number }>;
  /** The first records' object structure and key. */
  examples: string[];
}

/**
 * The preview of the target's answer: `objects` with the keys to add and delete, the changes, the records left
 * unchanged and those refused, per object structure; the structural changes and admin mode (docs/cli.md, "Preview").
 */
export function previewSummary(answer: unknown): PreviewSummary {
  const fields = typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : {};
  const objects = Array.isArray(fields.objects) ? (fields.objects as Array<Record<string, unknown>>) : [];
  const size = (value: unknown) =>
    Array.isArray(value) ? value.length : typeof value === 'number' ? value : 0;
  const refusals = objects.flatMap((entry) =>
    (Array.isArray(entry.refused) ? (entry.refused as Array<Record<string, unknown>>) : []).map(
      (refused) => ({
        object: String(entry.objectstructure ?? ''),
        key: String(refused.key ?? ''),
        reason: String(refused.reason ?? ''),
      }),
    ),
  );
  return {
    rows: objects.map((entry) => ({
      object: String(entry.objectstructure ?? entry.object ?? ''),
      adds: size(entry.add),
      changes: size(entry.change),
      deletes: size(entry.delete),
      unchanged: size(entry.unchanged),
      refused: size(entry.refused),
      drifts: size(entry.drift),
    })),
    structural: Array.isArray(fields.structural) ? fields.structural.map(String) : [],
    adminmode: fields.adminmode === true,
    refusals,
    refusalGroups: Array.isArray(fields.refusalgroups)
      ? (fields.refusalgroups as Array<Record<string, unknown>>).map(refusalGroup)
      : groupedByReason(refusals),
  };
}

/** A group of the target's `refusalgroups`. */
function refusalGroup(entry: Record<string, unknown>): RefusalGroup {
  const objects = Array.isArray(entry.objectstructures)
    ? (entry.objectstructures as Array<Record<string, unknown>>)
    : [];
  return {
    reason: String(entry.reason ?? ''),
    remedy: String(entry.remedy ?? ''),
    count: typeof entry.count === 'number' ? entry.count : 0,
    objects: objects.map((object) => ({
      object: String(object.objectstructure ?? ''),
      count: typeof object.count === 'number' ? object.count : 0,
    })),
    examples: Array.isArray(entry.examples) ? entry.examples.map(String) : [],
  };
}

/** Groups of a target that lists its refusals one by one only: by reason, no remedy. */
function groupedByReason(refusals: PreviewSummary['refusals']): RefusalGroup[] {
  const groups = new Map<string, RefusalGroup>();
  for (const refusal of refusals) {
    let group = groups.get(refusal.reason);
    if (!group) {
      group = { reason: refusal.reason, remedy: '', count: 0, objects: [], examples: [] };
      groups.set(refusal.reason, group);
    }
    group.count += 1;
    const per = group.objects.find((entry) => entry.object === refusal.object);
    if (per) per.count += 1;
    else group.objects.push({ object: refusal.object, count: 1 });
    if (group.examples.length < 3) group.examples.push(`${refusal.object} ${refusal.key}`);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/** `1 to add, 2 to change, 0 to delete, 118 unchanged, 0 refused`: the counts of a preview, all structures. */
export function previewCounts(rows: readonly PreviewRow[]): string {
  const sum = (field: 'adds' | 'changes' | 'deletes' | 'unchanged' | 'refused') =>
    rows.reduce((total, row) => total + row[field], 0);
  return `${sum('adds')} to add, ${sum('changes')} to change, ${sum('deletes')} to delete, ${sum('unchanged')} unchanged, ${sum('refused')} refused`;
}

/** An error's reason code and message, the code once (messages of this service start with it). */
export function reasonAndMessage(error: EasClientError): string {
  const reason =
    error.reasonCode && !error.message.startsWith(error.reasonCode) ? `${error.reasonCode}: ` : '';
  return `${reason}${error.message}`;
}
