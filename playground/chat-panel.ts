const states = ['connecting', 'open', 'closing', 'closed'] as const;

/**
 * The chat panel: connects to `ws://chat/chat` with the in-page WebSocket
 * class and shows the socket's state as it changes ("closed" until connected).
 */
export function mountChatPanel(WebSocketClass: { new (url: string): WebSocket }): void {
  const label = document.getElementById('chat-state')!;
  const connect = document.getElementById('connect') as HTMLButtonElement;
  const disconnect = document.getElementById('disconnect') as HTMLButtonElement;
  const form = document.getElementById('chat-form') as HTMLFormElement;
  const send = form.querySelector('button')!;
  const log = document.getElementById('chat-log')!;
  let socket: WebSocket | undefined;

  const showState = (): void => {
    const state = states[socket?.readyState ?? 3]!;
    label.textContent = state;
    label.dataset.state = state;
    connect.disabled = state !== 'closed';
    disconnect.disabled = state !== 'open';
    send.disabled = state !== 'open';
  };
  const write = (text: string): void => {
    const entry = document.createElement('li');
    entry.textContent = text;
    log.append(entry);
  };

  connect.addEventListener('click', () => {
    socket = new WebSocketClass('ws://chat/chat');
    showState();
    socket.onopen = () => (showState(), write('connected'));
    socket.onmessage = (event) => write(`← ${event.data}`);
    socket.onclose = (event) => (showState(), write(`closed (${event.code})`));
    socket.onerror = () => write('error');
  });
  disconnect.addEventListener('click', () => {
    socket?.close(1000, 'bye');
    showState();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const input = form.elements.namedItem('message') as HTMLInputElement;
    socket?.send(input.value);
    write(`→ ${input.value}`);
    input.value = '';
  });
  showState();
}
