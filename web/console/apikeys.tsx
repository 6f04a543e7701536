import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { ErrorMessage, formatDate, Page, Status, useAction, useLoad, type PageProps } from './common.js';

import { keyExpiry, type KeyRecord } from './keys.js';

/** When a key expires (or expired: then said first, the row marked), or never (-1). */
function expiryOf(key: KeyRecord): string {
  const expiry = keyExpiry(key);
  if (expiry.at === undefined) return 'Never';
  const when = formatDate(expiry.at.toISOString());
  return expiry.expired ? `Expired ${when}` : when;
}

/** The expiries offered, in minutes as the API takes them (-1: never). */
function ExpiryOptions() {
  return (
    <>
      <option value="-1">Never</option>
      <option value="1440">In 1 day</option>
      <option value="43200">In 30 days</option>
      <option value="129600">In 90 days</option>
    </>
  );
}

/**
 * Keys: the user's own (created through `/apitoken/create`, shown once; revoked through `/apitoken/revoke`), and
 * for administrators every user's key (MXAPIAPIKEY): created for a user, listed, revoked.
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
      {isAdmin && <KeyForUser api={api} onChange={() => void list.reload()} />}
      {isAdmin && <KeyList api={api} keys={list.data} error={list.error} reload={list.reload} />}
    </Page>
  );
}

/** A key just created: shown once, selected, with a Copy button. */
function NewKey({
  id,
  label,
  copyLabel,
  value,
}: {
  id: string;
  label: string;
  copyLabel: string;
  value: string;
}) {
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, [value]);
  const copy = async () => {
    field.current?.select();
    await navigator.clipboard?.writeText(value).catch(() => undefined);
  };
  return (
    <div class="new-key">
      <label for={id}>{label}</label>
      <input id={id} ref={field} readOnly value={value} autocomplete="off" spellcheck={false} />
      <button type="button" onClick={() => void copy()} aria-label={copyLabel}>
        Copy
      </button>
    </div>
  );
}

function OwnKey({ api, onChange }: { api: Api; onChange: () => void }) {
  const [expiration, setExpiration] = useState('-1');
  const [created, setCreated] = useState<string | undefined>(undefined);
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
          <ExpiryOptions />
        </select>
        <button type="submit" disabled={action.busy}>
          Create API key
        </button>
        <button type="button" class="secondary" disabled={action.busy} onClick={revoke}>
          Revoke your API key
        </button>
      </form>
      {created !== undefined && (
        <NewKey
          id="new-key-value"
          label="Your new API key (shown only now)"
          copyLabel="Copy your key"
          value={created}
        />
      )}
      <ErrorMessage error={action.error} />
      <Status text={action.message} />
    </section>
  );
}

/** An administrator creates a user's key through MXAPIAPIKEY (docs/apikeys.md); the answer names it once. */
function KeyForUser({ api, onChange }: { api: Api; onChange: () => void }) {
  const [userid, setUserid] = useState('');
  const [expiration, setExpiration] = useState('-1');
  const [created, setCreated] = useState<{ userid: string; apikey: string } | undefined>(undefined);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const answer = await api.call<{ userid: string; apikey: string }>('/oslc/os/mxapiapikey?lean=1', {
        method: 'POST',
        body: { userid, expiration: Number(expiration) },
        headers: { properties: 'userid,apikey' },
      });
      setCreated(answer);
      onChange();
      return `An API key was created for ${answer.userid}. Copy it now: it is not shown again.`;
    });
  };
  return (
    <section aria-labelledby="user-key">
      <h2 id="user-key">Create a key for a user</h2>
      <form class="inline" onSubmit={submit}>
        <label for="key-user">User</label>
        <input
          id="key-user"
          value={userid}
          required
          onInput={(event) => setUserid(event.currentTarget.value)}
        />
        <label for="key-user-expiration">Key expires</label>
        <select
          id="key-user-expiration"
          value={expiration}
          onChange={(event) => setExpiration(event.currentTarget.value)}
        >
          <ExpiryOptions />
        </select>
        <button type="submit" disabled={action.busy}>
          Create key for user
        </button>
      </form>
      {created && (
        <NewKey
          id="user-key-value"
          label={`The new API key of ${created.userid} (shown only now)`}
          copyLabel={`Copy the key of ${created.userid}`}
          value={created.apikey}
        />
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
              <tr key={key.href} data-key={key.userid} class={keyExpiry(key).expired ? 'expired' : undefined}>
                <td>{key.userid}</td>
                <td>{formatDate(key.creationdate)}</td>
                <td>
                  {keyExpiry(key).expired ? <strong class="error">{expiryOf(key)}</strong> : expiryOf(key)}
                </td>
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
