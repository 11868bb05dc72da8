import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, getToken } from '../api.js';
import { Failure, Prose, Scroll, Unavailable } from './shared.js';

interface Backup {
  name: string;
  bytes: number;
  createdAt: string;
  scheduled: boolean;
}

interface BackupList {
  directory: string;
  backups: Backup[];
  schedule: { every: string | null; keep: number; note?: string };
  lastFailure: { at: string; message: string } | null;
}

/** A byte count as people read it: B, KiB or MiB. */
const size = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 ** 2
      ? `${(bytes / 1024).toFixed(0)} KiB`
      : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

/** Saves a backup: fetched with the admin token (a plain link has no header), then handed to the browser as a file. */
async function download(name: string): Promise<void> {
  const response = await fetch(`/admin/backups/${encodeURIComponent(name)}`, {
    headers: { authorization: `Bearer ${getToken() ?? ''}` },
  });
  if (!response.ok) throw new ApiError(await response.json());
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * The backups of the database on the overview: the list, Back up now, a
 * download per backup, and the last scheduled backup that failed.
 */
export function Backups() {
  const [list, setList] = useState<BackupList>();
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ kind: 'status' | 'alert'; text: string }>();
  const load = useCallback(
    () =>
      api<BackupList>('/admin/backups').then(
        (value) => (setList(value), setError(undefined)),
        (failure: Error) => setError(failure),
      ),
    [],
  );
  useEffect(() => void load(), [load]);
  // A runtime that makes no backups (the browser) says so with a 404: nothing to list, no alarm.
  if (error instanceof ApiError && error.problem.status === 404)
    return <Unavailable message={`No backups here: ${error.message}.`} />;
  if (error) return <Failure error={error} />;
  if (!list) return null;

  const backUp = async () => {
    setBusy(true);
    setNotice(undefined);
    try {
      const made = await api<Backup>('/admin/backups', { method: 'POST' });
      setNotice({ kind: 'status', text: `Backed up: ${made.name} (${size(made.bytes)}).` });
    } catch (failure) {
      setNotice({ kind: 'alert', text: `No backup was made: ${(failure as Error).message}` });
    }
    setBusy(false);
    void load();
  };

  return (
    <section aria-labelledby="backups-title">
      <h3 id="backups-title">Backups</h3>
      <p class="hint">
        {list.schedule.every
          ? `Every ${list.schedule.every}, keeping the newest ${list.schedule.keep}`
          : 'No schedule (set BERTH_BACKUP_INTERVAL)'}
        , in <code>{list.directory}</code>.
      </p>
      {list.schedule.note && (
        <p class="hint">
          <Prose text={list.schedule.note} />
        </p>
      )}
      {list.lastFailure && (
        <p role="alert" class="error">
          The scheduled backup of {new Date(list.lastFailure.at).toLocaleString()} failed:{' '}
          {list.lastFailure.message}
        </p>
      )}
      <p>
        <button type="button" onClick={() => void backUp()} disabled={busy}>
          {busy ? 'Backing up…' : 'Back up now'}
        </button>
      </p>
      <div role={notice?.kind ?? 'status'} class={notice?.kind === 'alert' ? 'error' : undefined}>
        {notice?.text}
      </div>
      {list.backups.length === 0 ? (
        <p class="empty">No backups yet.</p>
      ) : (
        <Scroll>
          <table class="backups">
            <thead>
              <tr>
                <th>Backup</th>
                <th>Made</th>
                <th>Size</th>
                <th>By</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.backups.map((backup) => (
                <tr key={backup.name}>
                  <td>
                    <code>{backup.name}</code>
                  </td>
                  <td>{new Date(backup.createdAt).toLocaleString()}</td>
                  <td>{size(backup.bytes)}</td>
                  <td>{backup.scheduled ? 'schedule' : 'hand'}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Download ${backup.name}`}
                      onClick={() =>
                        void download(backup.name).catch((failure: Error) =>
                          setNotice({ kind: 'alert', text: `Not downloaded: ${failure.message}` }),
                        )
                      }
                    >
                      Download
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </section>
  );
}
