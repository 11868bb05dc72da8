/**
 * Service Worker mode: `berth-sw.js` (beside this page) runs the same server,
 * so a plain `fetch('/users')` from this page is answered in the worker. It
 * claims the page on its first load; `status` shows whether it controls it.
 */
export function registerServiceWorker(status: HTMLElement): void {
  if (!('serviceWorker' in navigator)) {
    status.textContent = 'not supported by this browser';
    return;
  }
  const update = (): void => {
    status.textContent = navigator.serviceWorker.controller ? 'controlling this page' : 'installed';
  };
  navigator.serviceWorker
    .register('./berth-sw.js', { type: 'module', scope: './' })
    .then(() => navigator.serviceWorker.ready)
    .then(() => {
      update();
      navigator.serviceWorker.addEventListener('controllerchange', update);
    })
    .catch((error: Error) => (status.textContent = `unavailable (${error.message})`));
}
