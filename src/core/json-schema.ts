import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/** A zod schema as JSON Schema (draft 2020-12), for the API reference. */
export const toJsonSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return json;
};
