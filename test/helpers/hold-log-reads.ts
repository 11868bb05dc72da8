import type { ChangeLogDriver } from '../../src/core/internal.js';

/**
 * Holds every read of the change log until the answer is called: an
 * instance (or a page) that reads its log no further for a moment, while
 * another writes. Browser-safe (the IndexedDB contract bundles it).
 */
export function holdLogReads(changes: ChangeLogDriver): () => void {
  const read = changes.read.bind(changes);
  let open!: () => void;
  const gate = new Promise<void>((done) => (open = done));
  changes.read = async (after, limit) => {
    await gate;
    return read(after, limit);
  };
  return open;
}
