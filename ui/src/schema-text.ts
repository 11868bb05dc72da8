/** A JSON Schema as the OpenAPI document at /docs gives it (the parts the reference shows). */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  description?: string;
  $ref?: string;
}

/** The type in a word or two: `integer`, `string | null`, `"member" | "admin"`, `string[]`. */
export function schemaType(schema: Schema | undefined): string {
  if (!schema) return '';
  if (schema.$ref) return schema.$ref.split('/').pop() ?? schema.$ref;
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(schemaType).join(' | ');
  if (schema.type === 'array') return `${schemaType(schema.items) || 'any'}[]`;
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  return schema.type ?? 'any';
}

// Bounds that only say "a safe integer" are noise to a reader.
const meaningful = (bound: number | undefined): bound is number =>
  bound !== undefined && Math.abs(bound) < Number.MAX_SAFE_INTEGER;

/** The constraints a caller must meet, in short words: `1–100`, `length 1–200`, `default 20`. */
export function schemaRules(schema: Schema | undefined): string[] {
  if (!schema) return [];
  const rules: string[] = [];
  const { minimum, maximum, minLength, maxLength } = schema;
  if (meaningful(minimum) && meaningful(maximum)) rules.push(`${minimum}–${maximum}`);
  else if (meaningful(minimum)) rules.push(`≥ ${minimum}`);
  else if (meaningful(maximum)) rules.push(`≤ ${maximum}`);
  if (minLength !== undefined && maxLength !== undefined) rules.push(`length ${minLength}–${maxLength}`);
  else if (minLength) rules.push(`length ≥ ${minLength}`);
  else if (maxLength !== undefined) rules.push(`length ≤ ${maxLength}`);
  if (schema.format) rules.push(schema.format);
  if (schema.pattern) rules.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) rules.push(`default ${JSON.stringify(schema.default)}`);
  for (const variant of schema.anyOf ?? schema.oneOf ?? []) rules.push(...schemaRules(variant));
  return rules;
}
