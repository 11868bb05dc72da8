import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { SettingError } from './setting-error.js';

/** The variables of `.env` in `dir`, or none when there is no such file. */
export function readEnvFile(dir: string): Record<string, string> {
  const file = join(dir, '.env');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new SettingError(`cannot read ${file}: ${(error as Error).message}`);
  }
  return parseEnv(text) as Record<string, string>;
}

/** `.env` in `dir` and its mode (`0644`) when every user of the machine may read it; undefined when not (or absent). */
export function worldReadableEnvFile(dir: string): { file: string; mode: string } | undefined {
  const file = join(dir, '.env');
  try {
    const mode = statSync(file).mode & 0o7777;
    return mode & 0o004 ? { file, mode: mode.toString(8).padStart(4, '0') } : undefined;
  } catch {
    return undefined;
  }
}

/** A variable's value and where it came from: the real environment wins over `.env`. */
export interface Environment {
  get(name: string): { value: string; source: string } | undefined;
  /** The merged variables, real environment over `.env`. */
  readonly values: Record<string, string | undefined>;
}

export function mergeEnvironment(
  processEnv: Record<string, string | undefined>,
  dotenv: Record<string, string>,
): Environment {
  const values = { ...dotenv, ...processEnv };
  return {
    values,
    get(name) {
      const fromProcess = processEnv[name];
      if (fromProcess !== undefined && fromProcess !== '') {
        return { value: fromProcess, source: `the environment variable ${name}` };
      }
      const fromFile = dotenv[name];
      if (fromFile !== undefined && fromFile !== '') return { value: fromFile, source: `${name} in .env` };
      return undefined;
    },
  };
}
