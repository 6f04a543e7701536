/** What the server wrote into the page (src/console/shell.ts, `ConsoleModel`). */
export interface ConsoleModel {
  base: string;
  version: string;
  signIn: 'form' | 'federated';
  providers: Array<{ name: string; loginPath: string; logoutPath: string }>;
  user: { userid: string; displayname: string | null; isAdmin: boolean } | null;
  csrfToken: string | null;
}

export function readModel(): ConsoleModel {
  const element = document.querySelector('meta[name="eas-console"]');
  return JSON.parse(element?.getAttribute('content') ?? '{}') as ConsoleModel;
}
