import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import type { Collection } from '../collections.js';
import { CollectionView } from './records/collection-view.js';
import { dataHash } from './records/list-query.js';
import { Failure, Loading } from './shared.js';

/** `users?role=admin` (the hash after `#/data/`) → the collection's name and its list query. */
function parsePath(path: string): { name: string; query: string } {
  const [name = '', query = ''] = path.split(/\?(.*)/s);
  try {
    return { name: decodeURIComponent(name), query };
  } catch {
    return { name, query };
  }
}

/** Every collection of the app: pick one (the choice stays in the URL), then browse and change its records. */
export function DataPage({ path }: { path: string }) {
  const [collections, setCollections] = useState<Collection[]>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    api<{ collections: Collection[] }>('/admin/collections').then(
      (answer) => setCollections(answer.collections),
      setError,
    );
  }, []);
  const { name, query } = parsePath(path);
  const chosen =
    collections?.find((collection) => collection.name === name) ?? (name ? undefined : collections?.[0]);
  return (
    <section>
      <h2>Data</h2>
      {error ? (
        <Failure error={error} />
      ) : !collections ? (
        <Loading />
      ) : collections.length === 0 ? (
        <p class="placeholder" role="status">
          This app has no collections, so there is no data to show.
        </p>
      ) : (
        <>
          <nav class="collections" aria-label="Collections">
            {collections.map((collection) => (
              <a
                key={collection.name}
                href={dataHash(collection.name)}
                aria-current={collection === chosen ? 'page' : undefined}
              >
                {collection.name}
              </a>
            ))}
          </nav>
          {chosen ? (
            <CollectionView
              key={chosen.name}
              collection={chosen}
              collections={collections}
              query={query}
              navigate={(search, options) => {
                const hash = dataHash(chosen.name, search);
                if (options?.replace) location.replace(hash);
                else location.hash = hash;
              }}
            />
          ) : (
            <p role="alert" class="error">
              This app has no collection named “{name}”: pick one above.
            </p>
          )}
        </>
      )}
    </section>
  );
}
