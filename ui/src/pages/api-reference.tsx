import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import type { Schema } from '../schema-text.js';
import { type Operation, OperationDetails } from './operation.js';
import { Failure, Loading, Prose } from './shared.js';

interface Document {
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  tags?: Array<{ name: string; description?: string }>;
  components?: { schemas?: Record<string, Schema> };
}

const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Operations by their first tag, in the order the document lists its tags. */
function byTag(doc: Document) {
  const groups = new Map<string, Array<{ method: string; path: string; operation: Operation }>>(
    (doc.tags ?? []).map((tag) => [tag.name, []]),
  );
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!methods.has(method)) continue; // path-level `parameters`, `summary`…
      const tag = operation.tags?.[0] ?? 'other';
      groups.set(tag, [...(groups.get(tag) ?? []), { method, path, operation }]);
    }
  }
  return [...groups].filter(([, operations]) => operations.length);
}

/** The API reference, rendered from the OpenAPI document at /docs. */
export function ApiReferencePage() {
  const [doc, setDoc] = useState<Document>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    api<Document>('/docs').then(setDoc, setError);
  }, []);
  if (error) return <Failure error={error} />;
  if (!doc) return <Loading />;
  const resolve = (schema?: Schema): Schema | undefined =>
    schema?.$ref?.startsWith('#/components/schemas/')
      ? (doc.components?.schemas?.[schema.$ref.slice('#/components/schemas/'.length)] ?? schema)
      : schema;
  return (
    <section>
      <h2>
        API reference{' '}
        <small>
          {doc.info.title} {doc.info.version} · <a href="/docs">OpenAPI document</a>
        </small>
      </h2>
      {byTag(doc).map(([tag, operations]) => {
        const description = doc.tags?.find((t) => t.name === tag)?.description;
        return (
          <section key={tag} class="tag" aria-labelledby={`tag-${tag}`}>
            <h3 id={`tag-${tag}`}>{tag}</h3>
            {description && (
              <p>
                <Prose text={description} />
              </p>
            )}
            {operations.map(({ method, path, operation }) => (
              <OperationDetails
                key={`${method} ${path}`}
                method={method}
                path={path}
                operation={operation}
                resolve={resolve}
              />
            ))}
          </section>
        );
      })}
    </section>
  );
}
