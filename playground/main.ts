import './style.css';
import { createBrowserServer } from '../src/browser/browser-server.js';
import { chatModule } from '../src/modules/chat/index.js';
import { usersModule } from '../src/modules/users/index.js';

const server = createBrowserServer({ modules: [usersModule, chatModule], name: 'berth-playground' });
// For debugging and tests: the in-page server.
(window as unknown as { berth: unknown }).berth = {
  fetch: server.fetch,
  WebSocket: server.WebSocket,
  server,
};

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

server.ready.catch((error: Error) => {
  const banner = $('storage-problem');
  banner.hidden = false;
  banner.textContent = `Storage is unavailable: ${error.message}. Users cannot be saved in this browser.`;
});

// Users: through the in-page server's fetch.
interface User {
  id: string;
  name: string;
  email: string;
}
async function listUsers(): Promise<void> {
  const response = await server.fetch('/users?limit=100');
  const body = (await response.json()) as { items?: User[]; total?: number; detail?: string };
  if (!response.ok) {
    $('user-error').textContent = body.detail ?? response.statusText;
    return;
  }
  $('user-count').textContent = `${body.total} user${body.total === 1 ? '' : 's'}`;
  $('users').replaceChildren(
    ...body.items!.map((user) => {
      const item = document.createElement('li');
      item.textContent = `${user.name} <${user.email}> `;
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = 'Delete';
      remove.setAttribute('aria-label', `Delete ${user.name}`);
      remove.onclick = async () => {
        await server.fetch(`/users?id=${encodeURIComponent(user.id)}`, { method: 'DELETE' });
        await listUsers();
      };
      item.append(remove);
      return item;
    }),
  );
}
$('user-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target as HTMLFormElement;
  const data = Object.fromEntries(new FormData(form));
  const response = await server.fetch('/users', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(data),
  });
  if (response.ok) {
    form.reset();
    $('user-error').textContent = '';
  } else {
    const problem = (await response.json()) as { detail: string; errors?: Array<{ message: string }> };
    $('user-error').textContent = problem.errors?.map((error) => error.message).join('; ') || problem.detail;
  }
  await listUsers();
});
void listUsers();

// Chat: the in-page WebSocket class, states shown as they happen.
const names = ['connecting', 'open', 'closing', 'closed'];
let socket: InstanceType<typeof server.WebSocket> | undefined;
const showState = () => {
  const state = names[socket?.readyState ?? 3]!;
  const label = $('chat-state');
  label.textContent = state;
  label.dataset.state = state;
  ($('connect') as HTMLButtonElement).disabled = state !== 'closed';
  ($('disconnect') as HTMLButtonElement).disabled = state !== 'open';
  ($('chat-form').querySelector('button') as HTMLButtonElement).disabled = state !== 'open';
};
const log = (text: string) => {
  const entry = document.createElement('li');
  entry.textContent = text;
  $('chat-log').append(entry);
};
$('connect').addEventListener('click', () => {
  socket = new server.WebSocket('ws://chat/chat');
  showState();
  socket.onopen = () => (showState(), log('connected'));
  socket.onmessage = (event) => log(`← ${event.data}`);
  socket.onclose = (event) => (showState(), log(`closed (${(event as CloseEvent).code})`));
  socket.onerror = () => log('error');
});
$('disconnect').addEventListener('click', () => {
  socket?.close(1000, 'bye');
  showState();
});
$('chat-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = (event.target as HTMLFormElement).elements.namedItem('message') as HTMLInputElement;
  socket?.send(input.value);
  log(`→ ${input.value}`);
  input.value = '';
});
showState();

// Service Worker mode: the same server answers plain fetch('/users') from this page.
const swState = $('sw-state');
if ('serviceWorker' in navigator) {
  navigator.serviceWorker
    .register('./berth-sw.js', { type: 'module', scope: './' })
    .then(() => navigator.serviceWorker.ready)
    .then(() => {
      const update = () =>
        (swState.textContent = navigator.serviceWorker.controller ? 'controlling this page' : 'installed');
      update();
      navigator.serviceWorker.addEventListener('controllerchange', update);
    })
    .catch((error: Error) => (swState.textContent = `unavailable (${error.message})`));
} else {
  swState.textContent = 'not supported by this browser';
}
