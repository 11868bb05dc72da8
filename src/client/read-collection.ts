import type { FetchPath } from './client-types.js';

/** How many records a page of a read takes (the server's most). */
const pageSize = 100;

/** One answer of `GET /<topic>?…`, read: its records and the link to the next page. */
async function readPage(fetch: FetchPath, path: string): Promise<{ items: unknown[]; next: string | null }> {
  const response = await fetch(path);
  if (!response.ok) {
    // A problem+json answer says why: its detail and its field errors go into the error.
    const problem = (await response.json().catch(() => undefined)) as
      { detail?: unknown; errors?: Array<{ path?: unknown; message?: unknown }> } | undefined;
    const fields = Array.isArray(problem?.errors)
      ? problem.errors.map(({ path, message }) => ` (${String(path)}: ${String(message)})`).join('')
      : '';
    const detail = typeof problem?.detail === 'string' ? `: ${problem.detail}${fields}` : '';
    throw Object.assign(new Error(`GET ${path} answered ${response.status}${detail}`), {
      status: response.status,
    });
  }
  const body = (await response.json()) as { items?: unknown; next?: unknown };
  if (!Array.isArray(body.items)) throw new Error(`GET ${path} answered no list of items`);
  return { items: body.items, next: typeof body.next === 'string' ? body.next : null };
}

/** Every record of a collection, read page by page through the `next` links from its list's path. */
export async function readCollection<R>(fetch: FetchPath, list: string): Promise<R[]> {
  const records: R[] = [];
  let path: string | null = `${list}?limit=${pageSize}`;
  while (path !== null) {
    const page = await readPage(fetch, path);
    records.push(...(page.items as R[]));
    path = page.next;
  }
  return records;
}

/**
 * A resync of `topic` as its feed takes it: its reason, and what reads the
 * topic again given a `fetch`: its list at the path the server named
 * (`read`), at `/<topic>` when it named none (a server from before it did).
 * Where the server says it has no list (null), nothing is read, and the
 * reason says so.
 */
export function resyncOf<R>(
  fetch: FetchPath | undefined,
  topic: string,
  read: string | null | undefined,
  reason: string,
): { reason: string; reread: (() => Promise<R[]>) | undefined } {
  if (read === null)
    return {
      reason: `${reason} (it has no list route: the client cannot read it again by itself)`,
      reread: undefined,
    };
  const list = read ?? `/${topic}`;
  return { reason, reread: fetch ? () => readCollection<R>(fetch, list) : undefined };
}
