/**
 * The kept-lists cache of a collection's list route: serialized answers by
 * caller and URL, under the storage's reads version (kept only for reads
 * the data layer calls pure).
 */
import type { Caller } from './caller.js';

/** How many lists of one collection keep their answer at a time, and how many bytes of JSON in all. */
const keptLists = 64;
const keptBytes = 2 ** 21;
const utf8 = new TextEncoder();

/**
 * The serialized answers of one collection's lists, by caller and URL, kept
 * under the storage's reads version they were made under (IndexedDB's
 * in-memory copy: until it changes): a list asked for again is answered
 * without reading or serializing, which in the page is most of a list's
 * cost. Each answer is kept encoded (UTF-8): a browser makes a Response
 * from bytes, and reads it back, faster than from a string. Each version
 * object has its own answers, so instances of one app on different
 * storages never share them, and a version the driver has dropped takes
 * its answers with it. At most 64 answers and 2 MiB of JSON a version; a
 * list longer than a quarter of that is answered anew each time.
 */
export class KeptLists {
  readonly #byVersion = new WeakMap<
    object,
    { answers: Map<string, Uint8Array<ArrayBuffer>>; bytes: number }
  >();

  get(version: object, key: string): Uint8Array<ArrayBuffer> | undefined {
    return this.#byVersion.get(version)?.answers.get(key);
  }

  /** Keeps `json` when it is short enough; answers what to send (its bytes, or the string itself). */
  set(version: object, key: string, json: string): string | Uint8Array<ArrayBuffer> {
    // A very long list is answered anew each time (a character is a byte or more: no need to encode it to tell).
    if (json.length > keptBytes / 4) return json;
    const bytes = utf8.encode(json);
    if (bytes.byteLength > keptBytes / 4) return bytes;
    let kept = this.#byVersion.get(version);
    if (!kept) this.#byVersion.set(version, (kept = { answers: new Map(), bytes: 0 }));
    else if (kept.answers.size >= keptLists || kept.bytes + bytes.byteLength > keptBytes) {
      kept.answers.clear();
      kept.bytes = 0;
    }
    kept.answers.set(key, bytes);
    kept.bytes += bytes.byteLength;
    return bytes;
  }
}

/** Who a list is answered for, as far as its answer can tell: nobody, the admin token, or one user. */
export const callerKey = (caller: Caller | undefined): string =>
  caller === undefined
    ? ''
    : caller.admin
      ? 'admin'
      : `${caller.via}\u0000${caller.collection ?? ''}\u0000${caller.id}`;
