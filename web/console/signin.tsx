import { useState } from 'preact/hooks';
import { describeError } from './api.js';
import { Page, type PageProps } from './common.js';

/** Where to go after signing in: a path of this console only (never another site), else the overview. */
export function returnTarget(base: string): string {
  const asked = new URLSearchParams(location.search).get('returnTo');
  const fallback = `${base}/console/`;
  if (asked === null || !asked.startsWith(`${base}/`) || asked.startsWith('//') || asked.includes('\\'))
    return fallback;
  return asked;
}

/**
 * The server's own sign-in: the FORM login (`j_security_check`, with `csrf=1` so that the session's writes need
 * its token) in the native and directory modes, the identity providers' buttons in the federated ones.
 */
export function SignIn({ api, model }: PageProps) {
  const target = returnTarget(model.base);
  if (model.user) {
    return (
      <Page title="Signed in">
        <p>
          You are signed in as <strong>{model.user.userid}</strong>. <a href={target}>Continue</a>
        </p>
      </Page>
    );
  }
  if (model.signIn === 'federated') {
    return (
      <Page title="Sign in">
        <p>Sign in with your organization's account.</p>
        <ul class="providers">
          {model.providers.map((provider) => (
            <li key={provider.loginPath}>
              <a
                class="button"
                href={`${api.base}${provider.loginPath}?returnTo=${encodeURIComponent(target)}`}
              >
                Sign in with {provider.name}
              </a>
            </li>
          ))}
        </ul>
      </Page>
    );
  }
  return <FormSignIn base={api.base} target={target} />;
}

function FormSignIn({ base, target }: { base: string; target: string }) {
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      const response = await fetch(`${base}/j_security_check?csrf=1`, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          j_username: String(form.get('j_username') ?? ''),
          j_password: String(form.get('j_password') ?? ''),
        }),
        credentials: 'same-origin',
        // Success answers a redirect to the landing page with the session cookie: the console goes on instead.
        redirect: 'manual',
      });
      if (response.type === 'opaqueredirect' || response.ok) {
        location.assign(target);
        return;
      }
      const body = (await response.json().catch(() => ({}))) as { Error?: { message?: string } };
      setError(body.Error?.message ?? `HTTP ${response.status}`);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title="Sign in">
      <form class="signin" onSubmit={submit}>
        <label for="j_username">User name</label>
        <input id="j_username" name="j_username" autocomplete="username" required />
        <label for="j_password">Password</label>
        <input id="j_password" name="j_password" type="password" autocomplete="current-password" required />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </Page>
  );
}
