import { type Schema, schemaRules, schemaType } from '../schema-text.js';
import { Prose, Scroll } from './shared.js';

export interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: Schema }>;
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> };
  responses: Record<string, { description: string }>;
  security?: unknown[];
}

function FieldRow({
  name,
  required,
  schema,
  where,
}: {
  name: string;
  required?: boolean;
  schema?: Schema;
  where?: string;
}) {
  const rules = schemaRules(schema);
  return (
    <tr>
      <td>
        <code>{name}</code>
        {required ? <abbr title="required"> *</abbr> : null}
      </td>
      {where !== undefined && <td>{where}</td>}
      <td>
        <code>{schemaType(schema)}</code>
        {rules.length ? <small> {rules.join(' · ')}</small> : null}
      </td>
      <td>{schema?.description ? <Prose text={schema.description} /> : ''}</td>
    </tr>
  );
}

function Body({ type, schema }: { type: string; schema?: Schema }) {
  if (!schema?.properties) {
    return <pre>{JSON.stringify(schema ?? {}, null, 2)}</pre>;
  }
  return (
    <Scroll>
      <table>
        <caption>
          <code>{type}</code>
        </caption>
        <thead>
          <tr>
            <th>Field</th>
            <th>Type</th>
            <th>Description</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(schema.properties).map(([name, property]) => (
            <FieldRow key={name} name={name} schema={property} required={schema.required?.includes(name)} />
          ))}
        </tbody>
      </table>
    </Scroll>
  );
}

/** One operation of the API reference: method and path, then what to send and what comes back. */
export function OperationDetails({
  method,
  path,
  operation,
  resolve,
}: {
  method: string;
  path: string;
  operation: Operation;
  resolve: (schema?: Schema) => Schema | undefined;
}) {
  const [bodyType, body] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
  return (
    <details class="operation">
      <summary>
        <span class={`method ${method}`}>{method.toUpperCase()}</span> <code>{path}</code>{' '}
        {operation.summary && <Prose text={operation.summary} />}
        {operation.security?.length ? <span class="badge">admin token</span> : null}
      </summary>
      {operation.description && (
        <p>
          <Prose text={operation.description} />
        </p>
      )}
      {operation.parameters?.length ? (
        <Scroll>
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
                <FieldRow
                  key={`${parameter.in} ${parameter.name}`}
                  name={parameter.name}
                  where={parameter.in}
                  required={parameter.required}
                  schema={{ ...resolve(parameter.schema), description: parameter.description }}
                />
              ))}
            </tbody>
          </table>
        </Scroll>
      ) : null}
      {bodyType && (
        <>
          <h4>Body{operation.requestBody?.required ? '' : ' (optional)'}</h4>
          <Body type={bodyType} schema={resolve(body?.schema)} />
        </>
      )}
      <h4>Responses</h4>
      <ul class="responses">
        {Object.entries(operation.responses).map(([status, response]) => (
          <li key={status}>
            <code>{status}</code> {response.description}
          </li>
        ))}
      </ul>
    </details>
  );
}
