import type { ServiceSpec } from './service-spec.js';

const marker = 'berth-service:';

/**
 * The spec a unit or plist was written from, as one comment line, so that
 * `status` and `reload` find the data directory again. Hyphens are escaped
 * (`\u002d`) so the JSON never holds `--`, which an XML comment cannot.
 *
 * @example
 * `# ${specComment(spec)}` // in a systemd unit
 */
export const specComment = (spec: ServiceSpec): string =>
  `${marker} ${JSON.stringify(spec).replace(/-/g, '\\u002d')}`;

/** The spec in a file written by `service load`, or undefined for a file written by hand. */
export function readSpecComment(text: string): ServiceSpec | undefined {
  const json = new RegExp(`${marker} (\\{.*\\})`).exec(text)?.[1];
  if (!json) return undefined;
  try {
    return JSON.parse(json) as ServiceSpec;
  } catch {
    return undefined;
  }
}
