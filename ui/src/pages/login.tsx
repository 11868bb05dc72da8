import { useState } from 'preact/hooks';
import { api, ApiError, clearToken, setToken } from '../api.js';

function loginError(failure: unknown): string {
  if (!(failure instanceof ApiError)) return `The server did not answer: ${(failure as Error).message}`;
  const { status, title, detail } = failure.problem;
  if (status === 401 || status === 403)
    return 'That token was not accepted. Use the admin token printed at first start, or the value of BERTH_ADMIN_TOKEN.';
  if (status === 404) return 'This server has no admin API: GET /admin/overview answered 404.';
  return `${title}: ${detail}`;
}

/** The login screen: the token is checked against GET /admin/overview before it is kept. */
export function Login({ onLogin, notice }: { onLogin: () => void; notice?: string }) {
  const [token, setValue] = useState('');
  const [error, setError] = useState(notice ?? '');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    setToken(token.trim());
    try {
      await api('/admin/overview');
      onLogin();
    } catch (failure) {
      clearToken();
      setError(loginError(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Berth admin</h1>
        <label for="token">Admin token</label>
        <input
          id="token"
          type="password"
          autocomplete="current-password"
          value={token}
          onInput={(event) => setValue((event.target as HTMLInputElement).value)}
          required
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Log in'}
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <p class="hint">The token stays in this tab's session storage and is never put in a URL.</p>
      </form>
    </main>
  );
}
