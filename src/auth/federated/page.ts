import type { OwnKey } from '../../apikeys/service.js';

/** An identity provider as the sign-in page offers it. */
export interface SignInProvider {
  /** Text of its button: "Sign in with <name>". */
  name: string;
  /** Where its sign-in starts and its sign-out ends, relative to the context root. */
  loginPath: string;
  logoutPath: string;
}

export interface SignedInView {
  userid: string;
  displayname: string | null;
  csrfToken: string;
  key: OwnKey | undefined;
}

export interface SignInPageModel {
  contextRoot: string;
  providers: readonly SignInProvider[];
  /** The page's own address, where the providers return the browser. */
  pagePath: string;
  signedIn: SignedInView | undefined;
  /** Nonce of the page's inline script and style (the Content-Security-Policy admits nothing else). */
  nonce: string;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** What the page says of the user's key; the script writes the same after a change. */
export function keyStatus(key: OwnKey | undefined): string {
  if (!key) return 'You have no API key.';
  const expiry = key.expiresAt === null ? 'never expires' : `expires ${key.expiresAt.toISOString()}`;
  return `You have an API key, created ${key.createdAt.toISOString()}; it ${expiry}.`;
}

const STYLE = `
body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1b1f24}
main{max-width:40rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px #0003}
h1{font-size:1.5rem;margin-top:0}h2{font-size:1.2rem}
a.button,button{display:inline-block;padding:.6rem 1.1rem;border:1px solid #0b5cad;border-radius:.3rem;background:#0b5cad;
color:#fff;font:inherit;text-decoration:none;cursor:pointer}
button.secondary{background:#fff;color:#0b5cad}
a:focus-visible,button:focus-visible,select:focus-visible,input:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
ul.providers{list-style:none;padding:0}ul.providers li{margin:.5rem 0}
form{margin:1rem 0}label{margin-right:.5rem}select{font:inherit;padding:.3rem;margin-right:.5rem}
#key-value{width:100%;font-family:monospace;font-size:1rem;padding:.4rem;box-sizing:border-box}
`;

/**
 * The page's behaviour: keys are created and revoked through the self-service API (`<root>/oslc/apitoken/...`) with
 * the browser's session and its CSRF token, and the new key is shown once, in a field the user can copy from.
 */
const SCRIPT = `
const api = document.body.dataset.api;
const token = document.querySelector('meta[name="csrftoken"]').content;
const status = document.getElementById('key-status');
const message = document.getElementById('message');
const shown = document.getElementById('new-key');
const value = document.getElementById('key-value');
async function call(path, body) {
  const response = await fetch(api + path, {
    method: 'POST', credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json', csrftoken: token },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((answer.Error && answer.Error.message) || 'HTTP ' + response.status);
  return answer;
}
document.getElementById('create-key').addEventListener('submit', async (event) => {
  event.preventDefault();
  const minutes = Number(document.getElementById('expiration').value);
  try {
    const answer = await call('/apitoken/create', { expiration: minutes });
    value.value = answer.apikey;
    shown.hidden = false;
    const created = new Date();
    status.textContent = minutes < 0
      ? 'You have an API key, created ' + created.toISOString() + '; it never expires.'
      : 'You have an API key, created ' + created.toISOString() + '; it expires ' +
        new Date(created.getTime() + minutes * 60000).toISOString() + '.';
    message.textContent = 'A new API key was created. Copy it now: it is not shown again.';
    value.focus();
    value.select();
  } catch (error) {
    message.textContent = 'The key was not created: ' + error.message;
  }
});
document.getElementById('revoke-key').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const answer = await call('/apitoken/revoke', {});
    shown.hidden = true;
    value.value = '';
    status.textContent = 'You have no API key.';
    message.textContent = answer.revoked ? 'Your API key was revoked.' : 'You had no API key.';
  } catch (error) {
    message.textContent = 'The key was not revoked: ' + error.message;
  }
});
`;

/** The sign-in page: provider buttons, or, once signed in, the user's own API key (create, shown once, revoke). */
export function renderSignInPage(model: SignInPageModel): string {
  const { contextRoot, signedIn, nonce } = model;
  const head = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${signedIn ? `<meta name="csrftoken" content="${escapeHtml(signedIn.csrfToken)}">` : ''}
<title>Sign in - Enterprise Asset Service</title><style nonce="${nonce}">${STYLE}</style></head>`;
  if (!signedIn) {
    const returnTo = encodeURIComponent(model.pagePath);
    const buttons = model.providers
      .map(
        (provider) =>
          `<li><a class="button" href="${escapeHtml(`${contextRoot}${provider.loginPath}?returnTo=${returnTo}`)}">Sign in with ${escapeHtml(provider.name)}</a></li>`,
      )
      .join('');
    return `${head}<body><main><h1>Enterprise Asset Service</h1>
<p>Sign in with your organization's account.</p><ul class="providers">${buttons}</ul></main></body></html>`;
  }
  const who = signedIn.displayname
    ? `<strong>${escapeHtml(signedIn.userid)}</strong> (${escapeHtml(signedIn.displayname)})`
    : `<strong>${escapeHtml(signedIn.userid)}</strong>`;
  const signOut = model.providers[0]
    ? `<p><a href="${escapeHtml(`${contextRoot}${model.providers[0].logoutPath}`)}">Sign out</a></p>`
    : '';
  return `${head}<body data-api="${escapeHtml(`${contextRoot}/oslc`)}"><main><h1>Enterprise Asset Service</h1>
<p>Signed in as ${who}.</p>
<section aria-labelledby="keys-title"><h2 id="keys-title">API key</h2>
<p>Headless clients call <code>${escapeHtml(contextRoot)}/api/...</code> with the key in the request header <code>apikey</code>.
A user has one key: creating a key replaces the one you have.</p>
<p id="key-status">${escapeHtml(keyStatus(signedIn.key))}</p>
<form id="create-key"><label for="expiration">Expires</label><select id="expiration" name="expiration">
<option value="-1">Never</option><option value="1440">In 1 day</option><option value="43200">In 30 days</option>
<option value="129600">In 90 days</option></select><button type="submit">Create API key</button></form>
<div id="new-key" hidden><label for="key-value">Your new API key (shown only now):</label>
<input id="key-value" readonly autocomplete="off" spellcheck="false"></div>
<form id="revoke-key"><button type="submit" class="secondary">Revoke API key</button></form>
<p id="message" role="status" aria-live="polite"></p></section>
${signOut}</main><script nonce="${nonce}">${SCRIPT}</script></body></html>`;
}
