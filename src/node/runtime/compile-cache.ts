import { lstatSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import v8 from 'node:v8';
import { Script, constants } from 'node:vm';
import { crc32 } from 'node:zlib';
import { ensurePrivateDir, writePrivateFile } from '../data/private-files.js';

/**
 * A file's compiled code at load: read from the cache; refused by V8 (another
 * V8 or other flags); compiled from another text of the file (a rebuild or an
 * upgrade since); not there, or a cache directory that is not safe to use.
 */
export type CompileCacheState = 'used' | 'rejected' | 'stale' | 'missing';

/**
 * How long after the start the compiled code is written, in ms: long enough
 * for a server to have answered its first requests, whose code is then in
 * the cache too.
 */
const defaultWriteDelay = 5000;

/** Loads the entry (a CommonJS file) as Node would, through whatever loader is registered for it. */
const requireHere = createRequire(import.meta.url);

/** Partial files older than this were left by a process that died while writing. */
const abandonedAfter = 60_000;

/**
 * The directory the compiled code of the `berth` command is kept in:
 * `BERTH_COMPILE_CACHE` (a directory, or `false` for none), else the
 * service's own cache directory (`$CACHE_DIRECTORY`, which systemd gives a
 * unit with `CacheDirectory=`, as Berth's units have), else
 * `$XDG_CACHE_HOME/berth/compile`, else `~/.cache/berth/compile`; below it,
 * one folder per Node.js version and V8 flags (code cached under other flags
 * is refused). Undefined: no cache.
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
    let home = env.HOME;
    try {
      home ||= homedir();
    } catch {
      return undefined; // no HOME and no passwd entry (a container's arbitrary uid): no cache
    }
    if (!home) return undefined;
    base = join(home, '.cache', 'berth', 'compile');
  }
  return join(base, `${process.version}-${process.arch}-${v8.cachedDataVersionTag().toString(16)}`);
}

/** 32-bit FNV-1a of a short string, in hex: names the cache folder of one installed bundle. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * Whether compiled code may be read from and written to `directory`: it is
 * this user's and nobody else may write to it or, before it exists, the
 * nearest folder that does is this user's or root's. Cached code is trusted
 * bytecode, so a directory another user could plant files in is never used
 * (`sudo` keeping a user's HOME, a shared path in BERTH_COMPILE_CACHE), and
 * root makes no folders of its own in a user's home.
 */
function safeToUse(directory: string): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  for (let path = directory; ;) {
    try {
      const stat = lstatSync(path);
      if (path === directory) return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o022) === 0;
      return stat.isDirectory() && (stat.uid === uid || stat.uid === 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
      const parent = dirname(path);
      if (parent === path) return false;
      path = parent;
    }
  }
}

/** Whether a file was last modified more than `ms` ago (false when it is gone). */
function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - lstatSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}

/** Cached code nobody wrote for this long is another install's or another Node.js's that no longer runs here. */
const idleAfter = 30 * 24 * 60 * 60 * 1000;
/** The names of the folders Berth makes: one per Node.js version, architecture and V8 flags; one per installed bundle. */
const versionFolder =
  /^v\d+\.\d+\.\d+-(?:arm|arm64|ia32|loong64|mips|mipsel|ppc|ppc64|riscv64|s390|s390x|x64)-[0-9a-f]{1,8}$/;
const installFolder = /^[0-9a-f]{8}$/;

/**
 * Whether a folder holds cached code (`.v8`, `.tmp` files) and nothing else,
 * none of it written for `idleAfter`. An empty folder is not idle: a start
 * may have just made it.
 */
function idle(folder: string): boolean {
  try {
    const entries = readdirSync(folder, { withFileTypes: true });
    return (
      entries.length > 0 &&
      entries.every(
        (entry) =>
          entry.isFile() &&
          /\.(?:v8|tmp)$/.test(entry.name) &&
          olderThan(join(folder, entry.name), idleAfter),
      )
    );
  } catch {
    return false;
  }
}

/**
 * Removes the idle install folders of a version folder, but `keep`'s; the
 * version folder too when that left it empty (one found empty is left).
 */
function removeIdle(version: string, keep?: string): void {
  let removed = false;
  for (const name of readdirSync(version)) {
    const install = join(version, name);
    // Only folders of this user's that are no link (safeToUse): a link's target may be anybody's.
    if (name !== keep && installFolder.test(name) && safeToUse(install) && idle(install)) {
      rmSync(install, { recursive: true, force: true });
      removed = true;
    }
  }
  if (removed && keep === undefined) {
    try {
      rmdirSync(version); // only when nothing is left in it
    } catch {
      // still in use
    }
  }
}

type Load = (module: Module, filename: string) => void;

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
 * held); a process that ends sooner writes nothing. Each entry carries
 * the CRC-32 of the text it was compiled from and is used only for that
 * text (V8 itself checks only the length), so a rebuilt or upgraded Berth
 * never runs old code; writing removes the entries of files that are gone,
 * and the folders of other installs and Node.js versions that nobody wrote
 * for 30 days.
 * A cache that cannot be read or written only costs the compiling it would
 * have saved. Node.js ≥ 22 has this built in (`module.enableCompileCache`);
 * this works the same on the Node.js 20 Berth supports.
 */
export function requireWithCompileCache(entry: string, options: CompileCacheOptions): LoadedWithCompileCache {
  const states = new Map<string, CompileCacheState>();
  if (options.directory === undefined) {
    requireHere(entry);
    return { states, write: () => undefined };
  }
  const versions = options.directory;
  const folder = dirname(entry);
  const directory = join(versions, fnv1a(folder));
  const readable = safeToUse(directory);
  const pending: Array<{ script: Script; name: string; checksum: number }> = [];
  let timer: NodeJS.Timeout | undefined;
  // V8 stamps cached code with a hash of its flags and a start refuses code stamped with others: nothing
  // is written once any flag changed (a program may change one; Berth itself changes none).
  const flags = v8.cachedDataVersionTag();
  const write = (): void => {
    if (pending.length === 0 || v8.cachedDataVersionTag() !== flags) return;
    const written = pending.splice(0);
    try {
      if (!safeToUse(directory)) return;
      ensurePrivateDir(directory);
      if (!safeToUse(directory)) return;
      for (const { script, name, checksum } of written) {
        const header = Buffer.alloc(4);
        header.writeUInt32LE(checksum);
        try {
          writePrivateFile(join(directory, name), Buffer.concat([header, script.createCachedData()]));
        } catch {
          // this one file: the next start compiles it again
        }
      }
      const files = new Set(readdirSync(folder));
      for (const name of readdirSync(directory)) {
        const gone = name.endsWith('.v8') && !files.has(name.slice(0, -'.v8'.length));
        if (gone || (name.endsWith('.tmp') && olderThan(join(directory, name), abandonedAfter)))
          rmSync(join(directory, name), { force: true });
      }
      // The code of installs and Node.js versions no longer run here: nothing else removes it.
      if (safeToUse(versions)) removeIdle(versions, basename(directory));
      // Other versions only in a folder Berth names (`…/compile`), never among a chosen directory's own folders.
      const base = dirname(versions);
      if (basename(base) === 'compile' && versionFolder.test(basename(versions)) && safeToUse(base)) {
        for (const name of readdirSync(base)) {
          const version = join(base, name);
          if (name !== basename(versions) && versionFolder.test(name) && safeToUse(version))
            removeIdle(version);
        }
      }
    } catch {
      // An unwritable cache: the next start compiles again, nothing else changes.
    }
  };

  // The loader of `.cjs` files (Node's own for `.js` until then), for this folder's files only: it reads
  // the file itself, so the text compiled and the checksum stored with its code come from the same bytes.
  const extensions = (Module as unknown as { _extensions: Record<string, Load> })._extensions;
  const load = extensions['.cjs'] ?? extensions['.js']!;
  extensions['.cjs'] = (module: Module, filename: string): void => {
    if (!filename.startsWith(folder + sep)) return load(module, filename);
    const bytes = readFileSync(filename);
    const checksum = crc32(bytes);
    const name = `${basename(filename)}.v8`;
    let cachedData: Buffer | undefined;
    let state: CompileCacheState = 'missing';
    if (readable) {
      try {
        const stored = readFileSync(join(directory, name));
        if (stored.length > 4 && stored.readUInt32LE(0) === checksum) cachedData = stored.subarray(4);
        else state = 'stale';
      } catch {
        // not there yet
      }
    }
    // The function Node wraps each CommonJS file in (module.wrap, written out: it is not a documented API).
    const wrapped = `(function (exports, require, module, __filename, __dirname) { ${bytes.toString('utf8')}\n});`;
    const script = new Script(wrapped, {
      filename,
      cachedData,
      importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    if (cachedData) state = script.cachedDataRejected ? 'rejected' : 'used';
    states.set(filename, state);
    pending.push({ script, name, checksum });
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
    wrapper.call(
      module.exports,
      module.exports,
      createRequire(filename),
      module,
      filename,
      dirname(filename),
    );
  };
  requireHere(entry);
  return { states, write };
}
