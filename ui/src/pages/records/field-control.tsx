import type { Collection, Field } from '../../collections.js';
import { inputTypeOf, optionLabel } from './field-values.js';
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

/** The input of one field in a record form, as its kind's hint (`field.ui`) says. */
export function FieldControl({ field, id, text, invalid, describedBy, collections, onInput }: ControlProps) {
  const common = {
    id,
    name: field.name,
    required: field.required,
    'aria-invalid': invalid ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
  };
  const fromSelect = (event: Event) => onInput((event.target as HTMLSelectElement).value);
  const { input, options = [], step } = field.ui;
  if (input === 'checkbox') {
    return (
      <input
        {...common}
        type="checkbox"
        checked={text === 'true'}
        onChange={(event) => onInput(String((event.target as HTMLInputElement).checked))}
      />
    );
  }
  if (input === 'select') {
    return (
      <select {...common} value={text} onChange={fromSelect}>
        <option value="">{field.required ? 'Choose…' : '—'}</option>
        {options.map((value) => (
          <option key={value} value={value}>
            {optionLabel(field, value)}
          </option>
        ))}
      </select>
    );
  }
  if (input === 'multi-select') return <MultiSelect {...{ text, options, onInput, common }} />;
  if (input === 'reference') return <ReferenceSelect {...{ field, text, collections, onInput, common }} />;
  if (input === 'json') {
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
      step={step ?? (input === 'datetime' ? '1' : undefined)}
      value={text}
      onInput={(event) => {
        const input = event.target as HTMLInputElement;
        onInput(input.value, input.validity.badInput);
      }}
    />
  );
}

/**
 * A multi-valued enum: a select of several values. Its text is the chosen
 * values as a JSON array, in the order offered (empty text: none given yet).
 */
function MultiSelect({
  text,
  options,
  onInput,
  common,
}: Pick<ControlProps, 'text' | 'onInput'> & {
  options: string[];
  common: Record<string, unknown> & { id: string };
}) {
  let chosen: unknown = [];
  try {
    chosen = text ? JSON.parse(text) : [];
  } catch {
    // Text the form never makes: nothing chosen.
  }
  const held = new Set(Array.isArray(chosen) ? chosen : []);
  return (
    <select
      {...common}
      multiple
      size={Math.min(Math.max(options.length, 2), 6)}
      onChange={(event) =>
        onInput(
          JSON.stringify(
            [...(event.target as HTMLSelectElement).selectedOptions].map((option) => option.value),
          ),
        )
      }
    >
      {options.map((value) => (
        <option key={value} value={value} selected={held.has(value)}>
          {value}
        </option>
      ))}
    </select>
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
