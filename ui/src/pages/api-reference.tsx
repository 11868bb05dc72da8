import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Failure, Loading } from './shared.js';

type Schema = Record<string, unknown>;
interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: Schema }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string }>;
  security?: unknown[];
}
interface Document {
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  tags?: Array<{ name: string; description?: string }>;
}

const typeOf = (schema: Schema | undefined): string =>
  !schema
    ? ''
    : schema.enum
      ? (schema.enum as unknown[]).join(' | ')
      : String((schema.type ?? schema.anyOf) ? 'value' : '');

/** The API reference, rendered from the OpenAPI document at /docs. */
export function ApiReferencePage() {
  const [doc, setDoc] = useState<Document>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    api<Document>('/docs').then(setDoc, setError);
  }, []);
  if (error) return <Failure error={error} />;
  if (!doc) return <Loading />;
  const byTag = new Map<string, Array<{ method: string; path: string; operation: Operation }>>();
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const tag = operation.tags?.[0] ?? 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), { method, path, operation }]);
    }
  }
  return (
    <section>
      <h2>
        API reference{' '}
        <small>
          {doc.info.title} {doc.info.version} · <a href="/docs">OpenAPI document</a>
        </small>
      </h2>
      {[...byTag].map(([tag, operations]) => (
        <section key={tag} class="tag">
          <h3>{tag}</h3>
          {doc.tags?.find((t) => t.name === tag)?.description && (
            <p>{doc.tags.find((t) => t.name === tag)!.description}</p>
          )}
          {operations.map(({ method, path, operation }) => (
            <details key={`${method} ${path}`} class="operation">
              <summary>
                <span class={`method ${method}`}>{method.toUpperCase()}</span> <code>{path}</code>{' '}
                {operation.summary}
                {operation.security?.length ? (
                  <span class="lock" title="needs the admin token">
                    {' '}
                    🔒
                  </span>
                ) : null}
              </summary>
              {operation.description && <p>{operation.description}</p>}
              {operation.parameters?.length ? (
                <table>
                  <thead>
                    <tr>
                      <th>Parameter</th>
                      <th>In</th>
                      <th>Type</th>
                      <th>Description</th>
                    </tr>
                  </thead>
                  <tbody>
                    {operation.parameters.map((parameter) => (
                      <tr key={parameter.name}>
                        <td>
                          <code>{parameter.name}</code>
                          {parameter.required ? ' *' : ''}
                        </td>
                        <td>{parameter.in}</td>
                        <td>{typeOf(parameter.schema)}</td>
                        <td>{parameter.description ?? ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : null}
              {operation.requestBody && (
                <>
                  <h4>Body</h4>
                  <pre>
                    {JSON.stringify(Object.values(operation.requestBody.content)[0]?.schema, null, 2)}
                  </pre>
                </>
              )}
              <h4>Responses</h4>
              <ul>
                {Object.entries(operation.responses).map(([status, response]) => (
                  <li key={status}>
                    <code>{status}</code> {response.description}
                  </li>
                ))}
              </ul>
            </details>
          ))}
        </section>
      ))}
    </section>
  );
}
