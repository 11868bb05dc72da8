import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

/** An admin report: either what the server has to say, or why it cannot say it here. */
export type Report<T> = ({ available: true } & T) | { available: false; message?: string };

/** Fetches an admin report now and every 2 s while the page is open. */
export function useReport<T>(path: string): { report?: Report<T>; error?: Error } {
  const [report, setReport] = useState<Report<T>>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    let live = true;
    const load = () =>
      api<Report<T>>(path).then(
        (value) => live && (setReport(value), setError(undefined)),
        (failure: Error) => live && setError(failure),
      );
    void load();
    const timer = setInterval(load, 2000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [path]);
  return { report, error };
}
