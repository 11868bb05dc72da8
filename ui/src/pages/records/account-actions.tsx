import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.js';
import { type Collection, offers, type RecordPage, shortId, type StoredRecord } from '../../collections.js';
import { dataHash } from './list-query.js';
import { problemNotice, type RecordActions, type RowAction, type RowContext } from './record-actions.js';

/**
 * The extras of Berth's accounts in the data browser: on users, whether
 * each can log in (Disable / Enable), how many live sessions they have and
 * End sessions; on sessions, Delete is Revoke.
 */

/** The accounts' sessions collection, when the app has it: its `user` field points into `users`. */
const sessionsOf = (users: Collection, collections: Collection[]): Collection | undefined =>
  collections.find(
    (collection) =>
      collection.name === 'sessions' &&
      collection.fields.some(
        (field) => field.name === 'user' && field.type === 'reference' && field.references === users.name,
      ),
  );

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** How many sessions of the user have not expired, linked to their list. */
function SessionsCell({ record, collection, collections, label }: RowContext) {
  const sessions = sessionsOf(collection, collections)!;
  const [count, setCount] = useState<number | Error>();
  useEffect(() => {
    // A new record object (the page was fetched again, after a change) counts again.
    let live = true;
    const query = new URLSearchParams({
      user: record.id,
      'expiresAt[gt]': new Date().toISOString(),
      limit: '1',
    });
    api<RecordPage>(`${sessions.path}?${query}`).then(
      (page) => live && setCount(page.total),
      (failure: Error) => live && setCount(failure),
    );
    return () => {
      live = false;
    };
  }, [record, sessions.path]);
  if (count === undefined) return <td aria-busy="true" />;
  if (count instanceof Error) {
    const { text, hint } = problemNotice('Not counted', count);
    return (
      <td class="error" title={hint ? `${text} ${hint}` : text}>
        not counted
      </td>
    );
  }
  return (
    <td>
      <a
        href={dataHash(sessions.name, new URLSearchParams({ user: record.id }))}
        aria-label={`${plural(count, 'live session')} of ${label}`}
      >
        {count}
      </a>
    </td>
  );
}

/** Users: Disable / Enable (ending their sessions), Set password and End sessions, when the app has Berth's accounts. */
export function userActions(users: Collection, collections: Collection[]): RecordActions | undefined {
  const canDisable =
    offers(users, 'update') &&
    users.fields.some((field) => field.name === 'disabled' && field.type === 'boolean');
  const sessions = sessionsOf(users, collections);
  if (!canDisable && !sessions) return undefined;
  return {
    columns: sessions && offers(sessions, 'list') ? [{ name: 'sessions', Cell: SessionsCell }] : [],
    actions: ({ record, label, notify, reload }) => {
      const actions: RowAction[] = [];
      if (canDisable) {
        const disabled = record.disabled === true;
        const verb = disabled ? 'Enable' : 'Disable';
        actions.push({
          key: 'disabled',
          text: verb,
          label: `${verb} ${label}`,
          danger: !disabled,
          run: async () => {
            notify(undefined);
            try {
              const saved = await api<StoredRecord>(`${users.path}/${encodeURIComponent(record.id)}`, {
                method: 'PATCH',
                json: { disabled: !disabled },
              });
              notify({
                kind: 'status',
                text: saved.disabled
                  ? `Disabled ${label}: they cannot log in${sessions ? ', and their sessions have ended' : ''}.`
                  : `Enabled ${label}: they can log in again.`,
              });
            } catch (failure) {
              notify(problemNotice(`${label} was not ${disabled ? 'enabled' : 'disabled'}`, failure));
            }
            reload();
          },
        });
      }
      if (sessions) {
        actions.push({
          key: 'set-password',
          text: 'Set password',
          label: `Set the password of ${label}`,
          confirm: {
            question: `A new password for ${label}; their sessions end.`,
            yes: 'Set password',
            name: `New password of ${label}`,
            input: {
              label: 'New password',
              check: (value) => (value ? undefined : 'Type the new password first.'),
            },
          },
          run: async (password) => {
            notify(undefined);
            try {
              await api(`/auth/users/${encodeURIComponent(record.id)}/password`, {
                method: 'PUT',
                json: { password },
              });
              notify({
                kind: 'status',
                text: `Set a new password for ${label}: their sessions have ended; tell them the new one.`,
              });
            } catch (failure) {
              notify(problemNotice(`The password of ${label} was not set`, failure));
            }
            reload();
          },
        });
        actions.push({
          key: 'end-sessions',
          text: 'End sessions',
          label: `End sessions of ${label}`,
          danger: true,
          confirm: {
            question: `End every session of ${label}? Their tokens stop working.`,
            yes: 'Yes, end sessions',
            name: `Confirm ending the sessions of ${label}`,
          },
          run: async () => {
            notify(undefined);
            try {
              const { ended } = await api<{ ended: number }>(
                `/auth/sessions?${new URLSearchParams({ user: record.id })}`,
                { method: 'DELETE' },
              );
              notify({
                kind: 'status',
                text: ended
                  ? `Ended ${plural(ended, 'session')} of ${label}.`
                  : `${label} had no sessions to end.`,
              });
            } catch (failure) {
              notify(problemNotice(`The sessions of ${label} were not ended`, failure));
            }
            reload();
          },
        });
      }
      return actions;
    },
  };
}

/** Sessions: named by their id (they have no name of their own), and deleting one revokes its token. */
export function sessionActions(collection: Collection): RecordActions | undefined {
  if (!collection.fields.some((field) => field.name === 'expiresAt')) return undefined;
  return {
    label: (record) => `session ${shortId(record.id)}`,
    remove: { verb: 'Revoke', doing: 'revoking', done: 'revoked' },
  };
}
