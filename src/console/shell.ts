/** What the console's script reads from the page it runs in (the `eas-console` meta element, as JSON). */
export interface ConsoleModel {
  /** Path of the context root as the browser reaches it (`/maximo`, or a proxy's prefix): every address starts here. */
  base: string;
  version: string;
  /** `form`: the server's own FORM login; `federated`: the identity providers' buttons. */
  signIn: 'form' | 'federated';
  providers: Array<{ name: string; loginPath: string; logoutPath: string }>;
  /** The signed-in user, when the request came with a live session. */
  user: { userid: string; displayname: string | null; isAdmin: boolean } | null;
  /** The session's CSRF token: the console sends it with every write (docs/console.md, "Sign-in, session and CSRF"). */
  csrfToken: string | null;
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/**
 * Every page address answers this shell; the script draws the page the address names. No inline script or style:
 * the Content-Security-Policy admits files of this origin only (`CONSOLE_CSP`).
 */
export function renderShell(model: ConsoleModel): string {
  const assets = `${model.base}/console/assets`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="eas-console" content="${escapeAttribute(JSON.stringify(model))}">
<title>Console - Enterprise Asset Service</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeAttribute(`${assets}/app.css`)}">
<script type="module" src="${escapeAttribute(`${assets}/app.js`)}"></script>
</head><body><div id="app"><noscript>The console needs JavaScript.</noscript></div></body></html>`;
}

/** Scripts, styles, images and API calls of this origin only; no inline script, no framing. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
