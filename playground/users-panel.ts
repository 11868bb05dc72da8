import { isStorageProblem, showStorageProblem } from './storage-problem.js';

interface User {
  id: string;
  name: string;
  email: string;
}
interface Problem {
  status: number;
  detail: string;
  errors?: Array<{ message: string }>;
}

/** The users panel: create, list and delete users through the in-page server's `fetch`. */
export function mountUsersPanel(fetch: (path: string, init?: RequestInit) => Promise<Response>): void {
  const form = document.getElementById('user-form') as HTMLFormElement;
  const error = document.getElementById('user-error')!;
  const count = document.getElementById('user-count')!;
  const list = document.getElementById('users')!;

  const report = (problem: Problem): void => {
    error.textContent = problem.errors?.map((field) => field.message).join('; ') || problem.detail;
    if (isStorageProblem(problem.status)) showStorageProblem(problem);
  };
  const item = (user: User): HTMLLIElement => {
    const entry = document.createElement('li');
    entry.textContent = `${user.name} <${user.email}> `;
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.textContent = 'Delete';
    remove.setAttribute('aria-label', `Delete ${user.name}`);
    remove.onclick = async () => {
      // DELETE /users takes the id in the query (or in a JSON body, or as DELETE /users/:id).
      const response = await fetch(`/users?id=${encodeURIComponent(user.id)}`, { method: 'DELETE' });
      if (!response.ok) report((await response.json()) as Problem);
      await refresh();
    };
    entry.append(remove);
    return entry;
  };
  const refresh = async (): Promise<void> => {
    const response = await fetch('/users?limit=100');
    const body = (await response.json()) as { items: User[]; total: number } & Problem;
    if (!response.ok) return report(body);
    count.textContent = `${body.total} user${body.total === 1 ? '' : 's'}`;
    list.replaceChildren(...body.items.map(item));
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const response = await fetch('/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Object.fromEntries(new FormData(form))),
    });
    if (response.ok) {
      form.reset();
      error.textContent = '';
    } else {
      report((await response.json()) as Problem);
    }
    await refresh();
  });
  void refresh();
}
