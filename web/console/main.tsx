import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Api, describeError } from './api.js';
import { AdminMode } from './adminmode.js';
import { ApiKeys } from './apikeys.js';
import { Audit } from './audit.js';
import { Definitions } from './definitions.js';
import { Refused, type PageProps } from './common.js';
import { readModel, type ConsoleModel } from './model.js';
import { Overview } from './overview.js';
import { Packages } from './packages.js';
import { Properties } from './properties.js';
import { Sessions } from './sessions.js';
import { SignIn } from './signin.js';
import './app.css';

interface PageEntry {
  title: string;
  component: (props: PageProps) => preact.JSX.Element | null;
  /** Only administrators may use it (the API refuses everyone else). */
  admin: boolean;
}

/** The pages by their address below `<base>/console/` (docs/console.md). */
const PAGES: Record<string, PageEntry> = {
  '': { title: 'Overview', component: Overview, admin: false },
  apikeys: { title: 'API keys', component: ApiKeys, admin: false },
  properties: { title: 'System properties', component: Properties, admin: true },
  definitions: { title: 'Package definitions', component: Definitions, admin: true },
  packages: { title: 'Packages', component: Packages, admin: true },
  audit: { title: 'Audit trail', component: Audit, admin: true },
  adminmode: { title: 'Admin mode', component: AdminMode, admin: true },
  sessions: { title: 'Sessions', component: Sessions, admin: true },
};

function pageOf(model: ConsoleModel): string {
  const path = location.pathname.slice(`${model.base}/console`.length).replace(/^\/+|\/+$/g, '');
  return path;
}

function Navigation({
  model,
  current,
  navigate,
}: {
  model: ConsoleModel;
  current: string;
  navigate: (path: string) => void;
}) {
  const follow = (event: MouseEvent, path: string) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(path);
  };
  return (
    <nav aria-label="Console">
      <ul>
        {Object.entries(PAGES)
          .filter(([, page]) => !page.admin || model.user?.isAdmin === true)
          .map(([path, page]) => {
            const href = `${model.base}/console/${path}`;
            return (
              <li key={path}>
                <a
                  href={href}
                  aria-current={current === path ? 'page' : undefined}
                  onClick={(event) => follow(event, href)}
                >
                  {page.title}
                </a>
              </li>
            );
          })}
      </ul>
    </nav>
  );
}

function SignOut({ api, model }: { api: Api; model: ConsoleModel }) {
  const [error, setError] = useState<string | undefined>(undefined);
  const signOut = async () => {
    const federated = model.signIn === 'federated' ? model.providers[0] : undefined;
    if (federated) {
      location.assign(`${model.base}${federated.logoutPath}`);
      return;
    }
    try {
      await api.call('/oslc/logout', { method: 'POST' });
      location.assign(`${model.base}/console/signin`);
    } catch (failure) {
      setError(describeError(failure));
    }
  };
  return (
    <div class="who">
      <span>
        Signed in as <strong>{model.user?.userid}</strong>
      </span>
      <button type="button" class="secondary" onClick={() => void signOut()}>
        Sign out
      </button>
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

function App({ model }: { model: ConsoleModel }) {
  const api = new Api(model);
  const [current, setCurrent] = useState(pageOf(model));
  useEffect(() => {
    const back = () => setCurrent(pageOf(model));
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, [model]);
  const navigate = (path: string) => {
    history.pushState(null, '', path);
    setCurrent(pageOf(model));
  };
  const signedOut = model.user === null;
  // Every page but the sign-in needs a session: without one the browser goes to the sign-in, and comes back.
  useEffect(() => {
    if (signedOut && current !== 'signin')
      location.replace(`${model.base}/console/signin?returnTo=${encodeURIComponent(location.pathname)}`);
  }, [signedOut, current, model.base]);
  const entry = PAGES[current];
  let content: preact.JSX.Element | null;
  if (current === 'signin') content = <SignIn api={api} model={model} navigate={navigate} />;
  else if (signedOut) content = null;
  else if (!entry) content = <p role="alert">There is no page at this address.</p>;
  else if (entry.admin && !model.user?.isAdmin) content = <Refused title={entry.title} />;
  else content = <entry.component api={api} model={model} navigate={navigate} />;
  return (
    <>
      <header>
        <a class="brand" href={`${model.base}/console/`}>
          EAS console
        </a>
        {model.user && <SignOut api={api} model={model} />}
      </header>
      {model.user && <Navigation model={model} current={current} navigate={navigate} />}
      <main>{content}</main>
      <footer>Enterprise Asset Service {model.version}</footer>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App model={readModel()} />, root);
}
