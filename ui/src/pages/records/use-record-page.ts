import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api.js';
import type { RecordPage } from '../../collections.js';

/**
 * One page of `GET <path>?<query>`, fetched again when the query changes or
 * `version` is bumped after a write. Only the answer to the latest request
 * is kept: answers can arrive out of order when the user clicks quickly.
 */
export function useRecordPage(
  path: string,
  query: string,
  version: number,
  enabled: boolean,
): { page?: RecordPage; error?: Error; loading: boolean } {
  const [state, setState] = useState<{ page?: RecordPage; error?: Error; loading: boolean }>({
    loading: enabled,
  });
  const latest = useRef(0);
  useEffect(() => {
    if (!enabled) return;
    const ticket = ++latest.current;
    setState((current) => ({ ...current, loading: true }));
    api<RecordPage>(query ? `${path}?${query}` : path).then(
      (page) => ticket === latest.current && setState({ page, loading: false }),
      (error: Error) => ticket === latest.current && setState({ error, loading: false }),
    );
  }, [path, query, version, enabled]);
  return state;
}
