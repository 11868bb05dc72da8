// The playground: Berth's in-browser server in this page (users on IndexedDB,
// the chat channel), and the same server in a Service Worker.
import './style.css';
import { createBrowserServer } from '../src/browser/browser-server.js';
import { chatModule } from '../src/modules/chat/index.js';
import { usersModule } from '../src/modules/users/index.js';
import { mountChatPanel } from './chat-panel.js';
import { showStorageProblem } from './storage-problem.js';
import { registerServiceWorker } from './service-worker-mode.js';
import { mountUsersPanel } from './users-panel.js';

const server = createBrowserServer({ modules: [usersModule, chatModule], name: 'berth-playground' });
// For debugging and tests: the in-page server.
(window as unknown as { berth: unknown }).berth = {
  fetch: server.fetch,
  WebSocket: server.WebSocket,
  server,
};

server.ready.catch((error: { status?: number; message: string }) =>
  showStorageProblem({ status: error.status ?? 503, detail: error.message }),
);
mountUsersPanel(server.fetch);
mountChatPanel(server.WebSocket);
registerServiceWorker(document.getElementById('sw-state')!);
