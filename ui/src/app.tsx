import { useEffect, useState } from 'preact/hooks';
import { clearToken, getToken } from './api.js';
import { ApiReferencePage } from './pages/api-reference.js';
import { BooksPage } from './pages/books.js';
import { Login } from './pages/login.js';
import { OverviewPage } from './pages/overview.js';
import { RealtimePage } from './pages/realtime.js';
import { ServicePage } from './pages/service.js';

const pages = {
  overview: { title: 'Overview', Page: OverviewPage },
  api: { title: 'API reference', Page: ApiReferencePage },
  books: { title: 'Books', Page: BooksPage },
  realtime: { title: 'Realtime', Page: RealtimePage },
  service: { title: 'Service', Page: ServicePage },
} as const;
type PageName = keyof typeof pages;

const current = (): PageName => {
  const name = location.hash.replace(/^#\/?/, '');
  return name in pages ? (name as PageName) : 'overview';
};

/** The admin UI: the login screen until a token is accepted, then the page named by the URL's hash. */
export function App() {
  const [loggedIn, setLoggedIn] = useState(Boolean(getToken()));
  const [page, setPage] = useState<PageName>(current());
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    const onHash = () => setPage(current());
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
  const { Page } = pages[page];
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
        <Page />
      </main>
    </div>
  );
}
