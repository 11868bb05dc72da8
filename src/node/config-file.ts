import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { SettingError } from './setting-error.js';

export const configFileName = 'berth.config.json';

/** Every key `berth.config.json` may hold. Unknown keys are an error, so typos show. */
export const ConfigFile = z.strictObject({
  $schema: z.string().optional(),
  port: z.unknown().optional(),
  host: z.string().min(1).optional(),
  dataDir: z.string().min(1).optional(),
  mode: z.enum(['debug', 'release']).optional(),
  bodyLimit: z.number().int().positive().optional(),
  shutdownTimeout: z.number().int().min(0).optional(),
  realtimePath: z.string().optional(),
  databaseUrl: z.string().min(1).optional(),
  redisUrl: z.string().min(1).optional(),
  workers: z.union([z.number().int().min(1).max(256), z.literal('auto')]).optional(),
  realtimeMaxMessage: z.number().int().positive().optional(),
  realtimeOrigins: z.array(z.string()).optional(),
  realtimePingInterval: z.number().int().positive().optional(),
  realtimePingTimeout: z.number().int().positive().optional(),
});
export type ConfigFile = z.infer<typeof ConfigFile>;

export interface LoadedConfig {
  /** Absolute path of the file, or undefined when none was found. */
  path: string | undefined;
  values: ConfigFile;
}

/**
 * Reads the config file: `explicitPath` (from `--config`) must exist;
 * otherwise `berth.config.json` in `cwd` is optional.
 */
export function loadConfigFile(cwd: string, explicitPath?: string): LoadedConfig {
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
  const result = ConfigFile.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const key = issue.path.join('.') || (issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : '');
    throw new SettingError(`${path}: ${key ? `"${key}": ` : ''}${issue.message}`);
  }
  return { path, values: result.data };
}
