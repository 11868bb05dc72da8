import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.js';
import {
  type Collection,
  type Field,
  offers,
  type RecordPage,
  recordLabel,
  shortId,
} from '../../collections.js';

/** The most records a reference select offers: one page of the target, as large as the API gives. */
export const optionLimit = 100;

export interface ReferenceOptions {
  options: Array<{ id: string; label: string }>;
  /** How many records the target has (more than the options when over the limit). */
  total: number;
}

/**
 * The records a reference field may point to, from the target's own list.
 * Undefined while loading, and for ever when the target cannot be listed
 * (then the form takes the id as text).
 */
export function useReferenceOptions(
  field: Field,
  collections: Collection[],
): { target?: Collection; choices?: ReferenceOptions; error?: string } {
  const target = collections.find((collection) => collection.name === field.references);
  const listable = target !== undefined && offers(target, 'list');
  const [choices, setChoices] = useState<ReferenceOptions>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    if (!listable) return;
    let live = true;
    api<RecordPage>(`${target.path}?limit=${optionLimit}`).then(
      (page) =>
        live &&
        setChoices({
          total: page.total,
          options: page.items.map((record) => {
            const label = recordLabel(target, record);
            const short = shortId(record.id);
            return { id: record.id, label: label === short ? short : `${label} · ${short}` };
          }),
        }),
      (failure: Error) => live && setError(failure.message),
    );
    return () => {
      live = false;
    };
  }, [target?.path, listable]);
  return { target: listable ? target : undefined, choices, error };
}
