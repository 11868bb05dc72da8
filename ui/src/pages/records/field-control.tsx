import type { Collection, Field } from '../../collections.js';
import { inputTypeOf } from './field-values.js';
import { optionLimit, useReferenceOptions } from './reference-options.js';

/** What a control reports on input: its text, and whether a number input holds something unreadable. */
export type ControlInput = (text: string, unreadable?: boolean) => void;

interface ControlProps {
  field: Field;
  id: string;
  text: string;
  invalid: boolean;
  describedBy: string | undefined;
  collections: Collection[];
  onInput: ControlInput;
}

/** The input of one field in a record form, suited to its type. */
export function FieldControl({ field, id, text, invalid, describedBy, collections, onInput }: ControlProps) {
  const common = {
    id,
    name: field.name,
    required: field.required,
    'aria-invalid': invalid ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
  };
  const fromSelect = (event: Event) => onInput((event.target as HTMLSelectElement).value);
  if (field.type === 'boolean' && field.required) {
    return (
      <input
        {...common}
        type="checkbox"
        checked={text === 'true'}
        onChange={(event) => onInput(String((event.target as HTMLInputElement).checked))}
      />
    );
  }
  if (field.type === 'boolean' || field.type === 'enum') {
    const values = field.type === 'enum' ? (field.values ?? []) : ['true', 'false'];
    return (
      <select {...common} value={text} onChange={fromSelect}>
        <option value="">{field.required ? 'Choose…' : '—'}</option>
        {values.map((value) => (
          <option key={value} value={value}>
            {field.type === 'boolean' ? (value === 'true' ? 'yes' : 'no') : value}
          </option>
        ))}
      </select>
    );
  }
  if (field.type === 'reference')
    return <ReferenceSelect {...{ field, text, collections, onInput, common }} />;
  if (field.type === 'json') {
    return (
      <textarea
        {...common}
        rows={4}
        spellcheck={false}
        value={text}
        onInput={(event) => onInput((event.target as HTMLTextAreaElement).value)}
      />
    );
  }
  return (
    <input
      {...common}
      type={inputTypeOf(field) as 'text'}
      step={
        field.type === 'integer'
          ? '1'
          : field.type === 'real'
            ? 'any'
            : field.type === 'datetime'
              ? '1'
              : undefined
      }
      value={text}
      onInput={(event) => {
        const input = event.target as HTMLInputElement;
        onInput(input.value, input.validity.badInput);
      }}
    />
  );
}

/** A reference: a select of the target's records (first text field and id), or the id as text. */
function ReferenceSelect({
  field,
  text,
  collections,
  onInput,
  common,
}: Pick<ControlProps, 'field' | 'text' | 'collections' | 'onInput'> & {
  common: Record<string, unknown> & { id: string };
}) {
  const { target, choices, error } = useReferenceOptions(field, collections);
  if (!target || error) {
    return (
      <input
        {...common}
        type="text"
        value={text}
        placeholder={`id of a ${field.references ?? 'record'} record`}
        onInput={(event) => onInput((event.target as HTMLInputElement).value)}
      />
    );
  }
  const options = choices?.options ?? [];
  const known = !text || options.some((option) => option.id === text);
  return (
    <>
      <select
        {...common}
        value={text}
        onChange={(event) => onInput((event.target as HTMLSelectElement).value)}
      >
        <option value="">{choices ? (field.required ? 'Choose…' : '—') : 'Loading…'}</option>
        {!known && <option value={text}>{text}</option>}
        {options.map((option) => (
          <option key={option.id} value={option.id}>
            {option.label}
          </option>
        ))}
      </select>
      {choices && choices.total > optionLimit && (
        <small class="hint">
          The first {optionLimit} of {choices.total} {target.name}.
        </small>
      )}
    </>
  );
}
