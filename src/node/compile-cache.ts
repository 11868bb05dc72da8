import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { Script, constants } from 'node:vm';
import { beforeV8FlagsChange } from './v8-flags.js';

/** A file's compiled code at load: read from the cache, refused by V8 (another V8 or other flags), or not there. */
export type CompileCacheState = 'used' | 'rejected' | 'missing';

/**
 * How long after the start the compiled code is written, in ms: long enough
 * for a server to have answered its first requests, whose code is then in
 * the cache too.
 */
const defaultWriteDelay = 5000;

/**
 * The directory the compiled code of the `berth` command is kept in:
 * `BERTH_COMPILE_CACHE` (a directory, or `false` for none), else the
 * service's own cache directory (`$CACHE_DIRECTORY`, which systemd gives a
 * unit with `CacheDirectory=`, as Berth's units have), else
 * `$XDG_CACHE_HOME/berth/compile`, else `~/.cache/berth/compile`; one
 * folder per Node.js version and architecture below it. Undefined: no cache.
 */
export function compileCacheDirectory(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const chosen = env.BERTH_COMPILE_CACHE?.trim();
  if (chosen && /^(?:false|off|0|no)$/i.test(chosen)) return undefined;
  const service = env.CACHE_DIRECTORY?.split(':')[0];
  let base =
    chosen ||
    (service ? join(service, 'compile') : undefined) ||
    (env.XDG_CACHE_HOME ? join(env.XDG_CACHE_HOME, 'berth', 'compile') : undefined);
  if (!base) {
    const home = env.HOME || homedir();
    if (!home) return undefined;
    base = join(home, '.cache', 'berth', 'compile');
  }
  return join(base, `${process.version}-${process.arch}`);
}

/** 32-bit FNV-1a of a short string, in hex: names the cache folder of one installed bundle. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * A file's cache name: its name and what `git status` also trusts to tell a
 * rewritten file (device, inode, size, modification and change times in
 * nanoseconds; the change time is the kernel's and moves on every write, also
 * when a package manager resets the modification time). Stat, not a digest
 * of the content: no hashing of 800 kB at each start, and no crypto library
 * loaded for it (OpenSSL's first digest alone holds 3 MiB more).
 */
function cacheName(filename: string): string {
  const stat = statSync(filename, { bigint: true });
  return `${basename(filename)}.${stat.dev}-${stat.ino}-${stat.size}-${stat.mtimeNs}-${stat.ctimeNs}.v8`;
}

type Compile = (this: Module, content: string, filename: string) => unknown;

export interface CompileCacheOptions {
  /** Where compiled code is kept; undefined loads the files as Node would. */
  directory: string | undefined;
  /** Milliseconds from loading a file (the entry, or a chunk loaded later) to writing the cache (default 5000). */
  writeDelay?: number;
}

export interface LoadedWithCompileCache {
  /** Each file of the entry's folder loaded so far, by path, and what its compiled code was at load. */
  states: Map<string, CompileCacheState>;
  /** Writes the compiled code now (instead of after `writeDelay`). */
  write: () => void;
}

/**
 * Requires `entry`, a CommonJS file, with V8's compiled code for it and the
 * files it requires from its own folder kept between runs. A start of the
 * `berth` command otherwise compiles the same 800 kB of bundled JavaScript
 * every time, then each function again on its first call. The code is
 * written a few seconds after the start (`writeDelay`), so it holds what the
 * start and its first requests compiled (with what the cache it started from
 * held); a process that ends sooner writes nothing. Berth's own change of a
 * V8 flag at run time (young-generation.ts) writes it at once instead, as V8
 * refuses code cached under other flags than a start's. A rewritten file
 * (a rebuild, an upgrade) gets a new cache name, so stale code never runs
 * (V8 itself checks only the length), and writing removes the folder's
 * entries for files that changed or are gone. A cache that cannot be read or
 * written only costs the compiling it would have saved. Node.js ≥ 22 has
 * this built in (`module.enableCompileCache`); this works the same on the
 * Node.js 20 Berth supports.
 */
export function requireWithCompileCache(entry: string, options: CompileCacheOptions): LoadedWithCompileCache {
  const states = new Map<string, CompileCacheState>();
  if (options.directory === undefined) {
    createRequire(import.meta.url)(entry);
    return { states, write: () => undefined };
  }
  const folder = dirname(entry);
  const directory = join(options.directory, fnv1a(folder));
  const pending: Array<{ script: Script; name: string }> = [];
  let timer: NodeJS.Timeout | undefined;
  // Code cached after a flag change would be refused at the next start: it is written just before, then no more.
  let flagsChanged = false;
  beforeV8FlagsChange(() => {
    write();
    flagsChanged = true;
  });
  const write = (): void => {
    if (flagsChanged || pending.length === 0) return;
    try {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      for (const { script, name } of pending.splice(0)) {
        const partial = join(directory, `${name}.${process.pid}.tmp`);
        try {
          writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
          renameSync(partial, join(directory, name));
        } catch {
          rmSync(partial, { force: true });
        }
      }
      const current = new Set<string>();
      for (const file of readdirSync(folder)) {
        try {
          current.add(cacheName(join(folder, file)));
        } catch {
          // gone since
        }
      }
      for (const name of readdirSync(directory)) {
        if (name.endsWith('.v8') && !current.has(name)) rmSync(join(directory, name), { force: true });
      }
    } catch {
      // An unwritable cache: the next start compiles again, nothing else changes.
    }
  };

  const prototype = Module.prototype as unknown as { _compile: Compile };
  const compile = prototype._compile;
  prototype._compile = function (this: Module, content: string, filename: string): unknown {
    if (!filename.startsWith(folder + sep)) return compile.call(this, content, filename);
    const name = cacheName(filename);
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(join(directory, name));
    } catch {
      cachedData = undefined;
    }
    // The function Node wraps each CommonJS file in (module.wrap, written out: it is not a documented API).
    const wrapped = `(function (exports, require, module, __filename, __dirname) { ${content}\n});`;
    const script = new Script(wrapped, {
      filename,
      cachedData,
      importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    const state: CompileCacheState = !cachedData
      ? 'missing'
      : script.cachedDataRejected
        ? 'rejected'
        : 'used';
    states.set(filename, state);
    pending.push({ script, name });
    timer ??= setTimeout(() => {
      timer = undefined;
      write();
    }, options.writeDelay ?? defaultWriteDelay).unref();
    const wrapper = script.runInThisContext({ displayErrors: true }) as (
      exports: unknown,
      require: NodeJS.Require,
      module: Module,
      __filename: string,
      __dirname: string,
    ) => unknown;
    return wrapper.call(
      this.exports,
      this.exports,
      createRequire(filename),
      this,
      filename,
      dirname(filename),
    );
  };
  createRequire(import.meta.url)(entry);
  return { states, write };
}
