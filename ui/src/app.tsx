import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { clearToken, getToken } from './api.js';
import { ApiReferencePage } from './pages/api-reference.js';
import { ChangesPage } from './pages/changes.js';
import { DataPage } from './pages/data.js';
import { Login } from './pages/login.js';
import { OverviewPage } from './pages/overview.js';
import { RealtimePage } from './pages/realtime.js';
import { ServicePage } from './pages/service.js';

/** A page of the admin UI; `path` is what the hash holds after its name (`#/data/users` → `users`). */
type PageEntry = { title: string; Page: ComponentType<{ path: string }> };

const pages = {
  overview: { title: 'Overview', Page: OverviewPage },
  api: { title: 'API reference', Page: ApiReferencePage },
  data: { title: 'Data', Page: DataPage },
  changes: { title: 'Changes', Page: ChangesPage },
  realtime: { title: 'Realtime', Page: RealtimePage },
  service: { title: 'Service', Page: ServicePage },
} satisfies Record<string, PageEntry>;
type PageName = keyof typeof pages;

/** `#/data/users?role=admin` → the page `data` and the rest, `users?role=admin`, for the page to read. */
const current = (): { page: PageName; path: string } => {
  const [name = '', path = ''] = location.hash.replace(/^#\/?/, '').split(/\/(.*)/s);
  return Object.hasOwn(pages, name) ? { page: name as PageName, path } : { page: 'overview', path: '' };
};

/** The admin UI: the login screen until a token is accepted, then the page named by the URL's hash. */
export function App() {
  const [loggedIn, setLoggedIn] = useState(Boolean(getToken()));
  const [{ page, path }, setLocation] = useState(current);
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    const onHash = () => setLocation(current());
    const onUnauthorized = () => {
      clearToken();
      setNotice('Your token is no longer accepted: log in again.');
      setLoggedIn(false);
    };
    window.addEventListener('hashchange', onHash);
    window.addEventListener('berth:unauthorized', onUnauthorized);
    return () => {
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('berth:unauthorized', onUnauthorized);
    };
  }, []);
  useEffect(() => {
    document.title = `${loggedIn ? pages[page].title : 'Log in'} · Berth admin`;
  }, [loggedIn, page]);
  if (!loggedIn) return <Login notice={notice} onLogin={() => (setNotice(undefined), setLoggedIn(true))} />;
  const { Page }: PageEntry = pages[page];
  return (
    <div class="shell">
      <header>
        <strong>Berth admin</strong>
        <nav aria-label="Pages">
          {Object.entries(pages).map(([name, { title }]) => (
            <a key={name} href={`#/${name}`} aria-current={name === page ? 'page' : undefined}>
              {title}
            </a>
          ))}
        </nav>
        <button
          type="button"
          onClick={() => {
            clearToken();
            setLoggedIn(false);
          }}
        >
          Log out
        </button>
      </header>
      <main>
        <Page path={path} />
      </main>
    </div>
  );
}
