/** The answer of `/dm/preview` (docs/migration.md, "Endpoints"). */
export interface PreviewAnswer {
  pkgdefname: string;
  dmpackageid: number;
  objects: Array<{
    objectstructure: string;
    add: unknown[];
    change: Array<{ key: unknown; attributes: Record<string, { from: unknown; to: unknown }> }>;
    delete: unknown[];
    drift: unknown[];
  }>;
  structural: string[];
}

const text = (value: unknown): string =>
  value === null || value === undefined
    ? '(none)'
    : typeof value === 'string'
      ? value
      : JSON.stringify(value);

/** What a deploy would do, as a readable diff: added, changed (old → new), deleted, and drifted records. */
export function Preview({ answer }: { answer: PreviewAnswer }) {
  return (
    <section class="preview" aria-labelledby="preview-title">
      <h2 id="preview-title">
        Preview of package {answer.dmpackageid} ({answer.pkgdefname})
      </h2>
      {answer.structural.length > 0 && (
        <p>Structural changes (admin mode needed): {answer.structural.join(', ')}</p>
      )}
      {answer.objects.map((object) => (
        <div key={object.objectstructure}>
          <h3>{object.objectstructure}</h3>
          <p>
            {object.add.length} added, {object.change.length} changed, {object.delete.length} deleted,{' '}
            {object.drift.length} drifted
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
                {Object.entries(change.attributes)
                  .map(([name, values]) => `${name} ${text(values.from)} → ${text(values.to)}`)
                  .join('; ')}
              </li>
            ))}
            {object.delete.map((key) => (
              <li class="deleted" key={`d${text(key)}`}>
                − deleted {text(key)}
              </li>
            ))}
            {object.drift.map((key) => (
              <li class="drift" key={`r${text(key)}`}>
                ! drift {text(key)} (changed here since the source last matched it)
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}
