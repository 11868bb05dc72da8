import { useState } from 'preact/hooks';
import { api, ApiError, clearToken, setToken } from '../api.js';

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
      const status = failure instanceof ApiError ? failure.problem.status : 0;
      setError(
        status === 401 || status === 403
          ? 'That token was not accepted. Use the admin token printed at first start, or the value of BERTH_ADMIN_TOKEN.'
          : `The server did not answer: ${(failure as Error).message}`,
      );
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
