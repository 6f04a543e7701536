import { useRef, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { ErrorMessage, formatDate, Page, Status, useAction, useLoad, type PageProps } from './common.js';

interface KeyRecord {
  userid: string;
  creationdate?: string;
  expiration?: number;
  href: string;
}

/** When a key expires: `expiration` minutes after its creation, or never (-1). */
function expiryOf(key: KeyRecord): string {
  if (key.expiration === undefined || key.expiration < 0 || !key.creationdate) return 'Never';
  return formatDate(new Date(Date.parse(key.creationdate) + key.expiration * 60_000).toISOString());
}

/**
 * Keys: the user's own (created through `/apitoken/create`, shown once; revoked through `/apitoken/revoke`), and
 * for administrators every user's key (MXAPIAPIKEY), each revocable.
 */
export function ApiKeys({ api, model }: PageProps) {
  const isAdmin = model.user?.isAdmin === true;
  const list = useLoad(async () =>
    isAdmin
      ? ((await api.members(
          'mxapiapikey',
          'oslc.select=userid,creationdate,expiration',
        )) as unknown as KeyRecord[])
      : [],
  );
  return (
    <Page title="API keys">
      <OwnKey api={api} onChange={() => void list.reload()} />
      {isAdmin && <KeyList api={api} keys={list.data} error={list.error} reload={list.reload} />}
    </Page>
  );
}

function OwnKey({ api, onChange }: { api: Api; onChange: () => void }) {
  const [expiration, setExpiration] = useState('-1');
  const [created, setCreated] = useState<string | undefined>(undefined);
  const field = useRef<HTMLInputElement>(null);
  const action = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const answer = await api.call<{ apikey: string }>('/oslc/apitoken/create', {
        method: 'POST',
        body: { expiration: Number(expiration) },
      });
      setCreated(answer.apikey);
      onChange();
      setTimeout(() => field.current?.select(), 0);
      return 'A new API key was created. Copy it now: it is not shown again.';
    });
  };
  const revoke = () =>
    void action.run(async () => {
      const answer = await api.call<{ revoked: boolean }>('/oslc/apitoken/revoke', { method: 'POST' });
      setCreated(undefined);
      onChange();
      return answer.revoked ? 'Your API key was revoked.' : 'You had no API key.';
    });
  const copy = async () => {
    if (created === undefined) return;
    field.current?.select();
    await navigator.clipboard?.writeText(created).catch(() => undefined);
  };
  return (
    <section aria-labelledby="own-key">
      <h2 id="own-key">Your API key</h2>
      <p>
        A user has one key: creating a key replaces the one you have. Clients send it in the header{' '}
        <code>apikey</code>.
      </p>
      <form class="inline" onSubmit={create}>
        <label for="expiration">Expires</label>
        <select
          id="expiration"
          value={expiration}
          onChange={(event) => setExpiration(event.currentTarget.value)}
        >
          <option value="-1">Never</option>
          <option value="1440">In 1 day</option>
          <option value="43200">In 30 days</option>
          <option value="129600">In 90 days</option>
        </select>
        <button type="submit" disabled={action.busy}>
          Create API key
        </button>
        <button type="button" class="secondary" disabled={action.busy} onClick={revoke}>
          Revoke your API key
        </button>
      </form>
      {created !== undefined && (
        <div class="new-key">
          <label for="new-key-value">Your new API key (shown only now)</label>
          <input
            id="new-key-value"
            ref={field}
            readOnly
            value={created}
            autocomplete="off"
            spellcheck={false}
          />
          <button type="button" onClick={() => void copy()}>
            Copy
          </button>
        </div>
      )}
      <ErrorMessage error={action.error} />
      <Status text={action.message} />
    </section>
  );
}

function KeyList({
  api,
  keys,
  error,
  reload,
}: {
  api: Api;
  keys: KeyRecord[] | undefined;
  error: unknown;
  reload: () => Promise<void>;
}) {
  const action = useAction();
  const revoke = (key: KeyRecord) =>
    void action.run(async () => {
      await api.call(`/${key.href}`, { method: 'DELETE' });
      await reload();
      return `The API key of ${key.userid} was revoked.`;
    });
  return (
    <section aria-labelledby="all-keys">
      <h2 id="all-keys">Every user's key</h2>
      <ErrorMessage error={error ?? action.error} />
      <Status text={action.message} />
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Owner</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(keys ?? []).map((key) => (
              <tr key={key.href}>
                <td>{key.userid}</td>
                <td>{formatDate(key.creationdate)}</td>
                <td>{expiryOf(key)}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    disabled={action.busy}
                    onClick={() => revoke(key)}
                    aria-label={`Revoke the key of ${key.userid}`}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
