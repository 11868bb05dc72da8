import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { SettingError } from './setting-error.js';
import { settingTable } from './setting-table.js';

export const configFileName = 'berth.config.json';

/** Every key `berth.config.json` may hold, from the setting table. Unknown keys are an error, so typos show. */
export const ConfigFile = z.strictObject({
  $schema: z.string().optional(),
  ...Object.fromEntries(
    Object.values(settingTable).flatMap((spec) =>
      spec.key && spec.config ? [[spec.key, spec.config.optional()]] : [],
    ),
  ),
});
export type ConfigFile = Record<string, unknown>;

export interface LoadedConfig {
  /** Absolute path of the file, or undefined when none was found. */
  path: string | undefined;
  values: ConfigFile;
}

/**
 * Reads the config file: `explicitPath` (from `--config`) must exist;
 * otherwise `berth.config.json` in `cwd` is optional. Besides Berth's keys
 * it holds one object per module with settings (`sections`: module name →
 * its setting names); any other key is an error that says where it goes.
 */
export function loadConfigFile(
  cwd: string,
  explicitPath?: string,
  sections: ReadonlyMap<string, readonly string[]> = new Map(),
): LoadedConfig {
  const path = resolve(cwd, explicitPath ?? configFileName);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !explicitPath)
      return { path: undefined, values: {} };
    throw new SettingError(`cannot read the config file ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SettingError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const schema = sections.size
    ? ConfigFile.extend(
        Object.fromEntries([...sections.keys()].map((name) => [name, z.unknown().optional()])),
      )
    : ConfigFile;
  const result = schema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0]!;
      const owner = [...sections].find(([, keys]) => keys.includes(key))?.[0];
      throw new SettingError(
        owner
          ? `${path}: "${key}" is a setting of the ${owner} module: put it under "${owner}", as { "${owner}": { "${key}": … } }`
          : `${path}: "${issue.keys.join(', ')}" is not a setting: Berth's are listed in the README's configuration table${sections.size ? `, and modules' go under their names (${[...sections.keys()].join(', ')})` : ''}`,
      );
    }
    const key = issue.path.join('.');
    throw new SettingError(`${path}: ${key ? `"${key}": ` : ''}${issue.message}`);
  }
  return { path, values: result.data as ConfigFile };
}
