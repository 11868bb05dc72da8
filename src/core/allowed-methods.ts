import { TrieRouter } from 'hono/router/trie-router';

/**
 * Finds which methods a path answers to, for 405 answers and OPTIONS. It is
 * consulted only when no route matched, so it costs nothing on the hot path.
 */
export function allowedMethodsLookup(
  routes: Iterable<{ method: string; path: string }>,
): (path: string) => string | undefined {
  const router = new TrieRouter<string[]>();
  const byPath = new Map<string, string[]>();
  for (const { method, path } of routes) byPath.set(path, [...(byPath.get(path) ?? []), method]);
  for (const [path, methods] of byPath) router.add('ALL', path, methods);
  return (path) => {
    const [matches] = router.match('GET', path);
    if (matches.length === 0) return undefined;
    const methods = new Set(matches.flatMap(([found]) => found));
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    return [...methods].join(', ');
  };
}
