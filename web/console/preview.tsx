/** A group of identical refusals of a preview (docs/migration.md, "Preview"). */
export interface RefusalGroup {
  reasoncode: string;
  reason: string;
  remedy: string;
  count: number;
  objectstructures: Array<{ objectstructure: string; count: number }>;
  examples: string[];
}

/** The answer of `/dm/preview`, of a deploy or of a back-out (docs/migration.md, "Endpoints"). */
export interface PreviewAnswer {
  pkgdefname: string;
  dmpackageid: number;
  objects: Array<{
    objectstructure: string;
    add: unknown[];
    change: Array<{ key: unknown; attributes?: Record<string, { from: unknown; to: unknown }> }>;
    delete: unknown[];
    drift?: unknown[];
    refused?: Array<{ key: string; reason: string; remedy?: string }>;
  }>;
  structural: string[];
  refusalgroups?: RefusalGroup[];
}

const text = (value: unknown): string =>
  value === null || value === undefined
    ? '(none)'
    : typeof value === 'string'
      ? value
      : JSON.stringify(value);

const records = (count: number) => `${count} record${count === 1 ? '' : 's'}`;

/**
 * What a deploy (or a back-out) would do, as a readable diff: added, changed (old → new), deleted and drifted records,
 * and what it would refuse, each distinct refusal once with its count and remedy.
 */
export function Preview({ answer, backout = false }: { answer: PreviewAnswer; backout?: boolean }) {
  const groups = answer.refusalgroups ?? [];
  return (
    <section class="preview" aria-labelledby="preview-title">
      <h2 id="preview-title">
        {backout ? 'Preview of the back-out of package' : 'Preview of package'} {answer.dmpackageid} (
        {answer.pkgdefname})
      </h2>
      {answer.structural.length > 0 && (
        <p>Structural changes (admin mode needed): {answer.structural.join(', ')}</p>
      )}
      {groups.length > 0 && <RefusalGroups groups={groups} />}
      {answer.objects.map((object) => (
        <ObjectDiff key={object.objectstructure} object={object} />
      ))}
    </section>
  );
}

/** Each distinct refusal once, with its count per object structure and its remedy. */
function RefusalGroups({ groups }: { groups: RefusalGroup[] }) {
  return (
    <div class="refusals" role="group" aria-labelledby="refusals-title">
      <h3 id="refusals-title">
        The deploy would refuse {records(groups.reduce((sum, group) => sum + group.count, 0))} and write
        nothing
      </h3>
      <ul>
        {groups.map((group) => (
          <li key={`${group.reason} ${group.remedy}`} data-refusal={group.reasoncode}>
            <strong>{group.reason}</strong>{' '}
            <span class="count">
              {records(group.count)} (
              {group.objectstructures.map((entry) => `${entry.objectstructure} ${entry.count}`).join(', ')})
            </span>
            <p class="remedy">{group.remedy}</p>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** One object structure's part of the diff: its counts, each record's line, then the refused ones one by one. */
function ObjectDiff({ object }: { object: PreviewAnswer['objects'][number] }) {
  return (
    <div>
      <h3>{object.objectstructure}</h3>
      <p class="counts">
        {object.add.length} added, {object.change.length} changed, {object.delete.length} deleted,{' '}
        {object.refused?.length ?? 0} refused, {object.drift?.length ?? 0} drifted
      </p>
      <ul class="diff">
        {object.add.map((key) => (
          <li class="added" key={`a${text(key)}`}>
            + added {text(key)}
          </li>
        ))}
        {object.change.map((change) => (
          <li class="changed" key={`c${text(change.key)}`}>
            ~ changed {text(change.key)}:{' '}
            {Object.entries(change.attributes ?? {})
              .map(([name, values]) => `${name} ${text(values.from)} → ${text(values.to)}`)
              .join('; ')}
          </li>
        ))}
        {object.delete.map((key) => (
          <li class="deleted" key={`d${text(key)}`}>
            − deleted {text(key)}
          </li>
        ))}
        {(object.drift ?? []).map((key) => (
          <li class="drift" key={`r${text(key)}`}>
            ! drift {text(key)} (changed here since the source last matched it)
          </li>
        ))}
      </ul>
      {(object.refused?.length ?? 0) > 0 && (
        <details>
          <summary>The {records(object.refused!.length)} refused, one by one</summary>
          <ul class="diff">
            {object.refused!.map((entry) => (
              <li class="refused" key={`x${entry.key}`}>
                × refused {entry.key}: {entry.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
