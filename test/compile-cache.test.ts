import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { compileCacheDirectory } from '../src/node/runtime/compile-cache.js';
import { runAsAnotherUser } from './helpers/as-another-user.js';
import { berthBin, repoRoot, startBinary, tempDir } from './helpers/processes.js';

const loader = join(repoRoot, 'dist', 'node', 'runtime', 'compile-cache.js');

/** A folder of CommonJS files like the bundle's: an entry requiring a chunk and a built-in. */
function fixture(part: string): string {
  const dir = join(tempDir('berth-compile-'), 'bundle');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'main.cjs'),
    "'use strict';\nconst { word } = require('./part.cjs');\nmodule.exports = { answer: `${word}:${require('node:path').basename(__filename)}` };\n",
  );
  writeFileSync(join(dir, 'part.cjs'), `exports.word = ${JSON.stringify(part)};\n`);
  return dir;
}

/** The compiled code kept under a cache directory: each file's path, sorted. */
function cachedFiles(cache: string): string[] {
  if (!existsSync(cache)) return [];
  return readdirSync(cache, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.v8'))
    .map((name) => join(cache, name))
    .sort();
}
const cached = (cache: string): string[] => cachedFiles(cache).map((file) => basename(file));

/**
 * Loads the fixture in a fresh process; its answer and each file's state.
 * `then` runs after the load, in that process (by default: write the cache now).
 */
function load(
  dir: string,
  cache: string,
  then = 'loaded.write();',
): { answer: string; states: Record<string, string> } {
  const script = `
    import { createRequire } from 'node:module';
    const { requireWithCompileCache } = await import(${JSON.stringify(loader)});
    const entry = ${JSON.stringify(join(dir, 'main.cjs'))};
    const loaded = requireWithCompileCache(entry, { directory: ${JSON.stringify(cache)}, writeDelay: 60_000 });
    ${then}
    const states = Object.fromEntries([...loaded.states].map(([file, state]) => [file.slice(${dir.length + 1}), state]));
    console.log(JSON.stringify({ answer: createRequire(import.meta.url)(entry).answer, states }));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

describe('the compile cache of the berth command', () => {
  it('keeps V8’s compiled code of a folder’s CommonJS files, in a folder only its user may write, and uses it on the next load', () => {
    const dir = fixture('first');
    const cache = join(tempDir(), 'cache');
    expect(load(dir, cache)).toEqual({
      answer: 'first:main.cjs',
      states: { 'main.cjs': 'missing', 'part.cjs': 'missing' },
    });
    expect(cached(cache)).toEqual(['main.cjs.v8', 'part.cjs.v8']);
    for (const file of cachedFiles(cache)) {
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    }
    expect(load(dir, cache)).toEqual({
      answer: 'first:main.cjs',
      states: { 'main.cjs': 'used', 'part.cjs': 'used' },
    });
  });

  it('never runs old code: a file changed to a text of the same length is compiled anew', () => {
    const dir = fixture('aaaa');
    const cache = join(tempDir(), 'cache');
    load(dir, cache);
    writeFileSync(join(dir, 'part.cjs'), readFileSync(join(dir, 'part.cjs'), 'utf8').replace('aaaa', 'bbbb'));
    expect(load(dir, cache)).toEqual({
      answer: 'bbbb:main.cjs',
      states: { 'main.cjs': 'used', 'part.cjs': 'stale' },
    });
    expect(load(dir, cache).states).toEqual({ 'main.cjs': 'used', 'part.cjs': 'used' });
  });

  it('removes the code of files that are gone from the folder', () => {
    const dir = fixture('kept');
    const cache = join(tempDir(), 'cache');
    writeFileSync(join(dir, 'old-chunk.cjs'), 'exports.x = 1;\n');
    load(dir, cache, "createRequire(entry)('./old-chunk.cjs'); loaded.write();");
    expect(cached(cache)).toEqual(['main.cjs.v8', 'old-chunk.cjs.v8', 'part.cjs.v8']);
    rmSync(join(dir, 'old-chunk.cjs'));
    load(dir, cache);
    expect(cached(cache)).toEqual(['main.cjs.v8', 'part.cjs.v8']);
  });

  it('removes the folders of other installs and Node.js versions nobody wrote for 30 days, and nothing else', () => {
    const dir = fixture('tidy');
    const base = join(tempDir(), 'compile');
    const ours = join(base, 'v20.0.0-x64-aaaa1111');
    const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000);
    const file = (path: string, days: number) => {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, 'x');
      utimesSync(path, daysAgo(days), daysAgo(days));
    };
    file(join(ours, 'deadbeef', 'main.cjs.v8'), 40); // an install gone for 40 days
    file(join(ours, 'cafebabe', 'main.cjs.v8'), 2); // an install run two days ago
    file(join(ours, '0badf00d', 'main.cjs.v8'), 40);
    file(join(ours, '0badf00d', 'notes.txt'), 40); // something else than cached code: not Berth's to remove
    file(join(ours, 'my-things', 'main.cjs.v8'), 40); // not a folder name Berth makes
    file(join(base, 'v18.0.0-x64-bbbb2222', 'deadbeef', 'main.cjs.v8'), 40); // a Node.js no longer run
    file(join(base, 'v22.0.0-x64-cccc3333', 'deadbeef', 'main.cjs.v8'), 1); // another Node.js still in use
    file(join(base, 'backups', 'deadbeef', 'main.cjs.v8'), 40);
    file(join(base, 'v1.0.0-rc-1', 'deadbeef', 'main.cjs.v8'), 40); // named like a version, but not one Berth makes
    mkdirSync(join(ours, 'feedface'), { mode: 0o700 }); // just made by another start, nothing written yet
    // A version folder that is a link: what it points to is not Berth's to clean.
    const elsewhere = join(tempDir(), 'elsewhere');
    file(join(elsewhere, 'deadbeef', 'main.cjs.v8'), 40);
    symlinkSync(elsewhere, join(base, 'v16.0.0-x64-dddd4444'));
    for (const folder of [base, ours]) chmodSync(folder, 0o700);
    load(dir, ours);
    expect(readdirSync(join(elsewhere, 'deadbeef'))).toEqual(['main.cjs.v8']);
    const own = basename(dirname(cachedFiles(ours).find((path) => path.endsWith('part.cjs.v8'))!));
    const left = readdirSync(base, { recursive: true, encoding: 'utf8' }).sort();
    expect(left).toEqual(
      [
        'backups',
        'backups/deadbeef',
        'backups/deadbeef/main.cjs.v8',
        'v20.0.0-x64-aaaa1111',
        'v20.0.0-x64-aaaa1111/0badf00d',
        'v20.0.0-x64-aaaa1111/0badf00d/main.cjs.v8',
        'v20.0.0-x64-aaaa1111/0badf00d/notes.txt',
        `v20.0.0-x64-aaaa1111/${own}`,
        `v20.0.0-x64-aaaa1111/${own}/main.cjs.v8`,
        `v20.0.0-x64-aaaa1111/${own}/part.cjs.v8`,
        'v1.0.0-rc-1',
        'v1.0.0-rc-1/deadbeef',
        'v1.0.0-rc-1/deadbeef/main.cjs.v8',
        'v16.0.0-x64-dddd4444',
        'v16.0.0-x64-dddd4444/deadbeef', // listed through the link, and left
        'v16.0.0-x64-dddd4444/deadbeef/main.cjs.v8',
        'v20.0.0-x64-aaaa1111/feedface',
        'v20.0.0-x64-aaaa1111/cafebabe',
        'v20.0.0-x64-aaaa1111/cafebabe/main.cjs.v8',
        'v20.0.0-x64-aaaa1111/my-things',
        'v20.0.0-x64-aaaa1111/my-things/main.cjs.v8',
        'v22.0.0-x64-cccc3333',
        'v22.0.0-x64-cccc3333/deadbeef',
        'v22.0.0-x64-cccc3333/deadbeef/main.cjs.v8',
      ].sort(),
    );
  });

  it('in a directory of the user’s choice (not named compile), other versions’ folders are left alone', () => {
    const dir = fixture('chosen');
    const base = join(tempDir(), 'my-cache');
    const ours = join(base, 'v20.0.0-x64-aaaa1111');
    const old = join(base, 'v18.0.0-x64-bbbb2222', 'deadbeef', 'main.cjs.v8');
    mkdirSync(dirname(old), { recursive: true, mode: 0o700 });
    writeFileSync(old, 'x');
    const longAgo = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);
    utimesSync(old, longAgo, longAgo);
    chmodSync(base, 0o700);
    load(dir, ours);
    expect(existsSync(old)).toBe(true);
    expect(cached(ours)).toEqual(['main.cjs.v8', 'part.cjs.v8']);
  });

  it("writes nothing once a V8 flag changed: V8 refuses code cached under other flags than a start's", () => {
    const dir = fixture('flags');
    const cache = join(tempDir(), 'cache');
    const changed = load(
      dir,
      cache,
      `(await import('node:v8')).default.setFlagsFromString('--no-flush-bytecode');
       loaded.write();`,
    );
    expect(changed.states).toEqual({ 'main.cjs': 'missing', 'part.cjs': 'missing' });
    expect(cached(cache)).toEqual([]);
  });

  it('a cache that cannot be written, or that others may write to, only costs the compiling', () => {
    const dir = fixture('safe');
    const blocked = join(tempDir(), 'not-a-directory');
    writeFileSync(blocked, 'a file where the cache would go');
    expect(load(dir, join(blocked, 'cache'))).toEqual({
      answer: 'safe:main.cjs',
      states: { 'main.cjs': 'missing', 'part.cjs': 'missing' },
    });

    const cache = join(tempDir(), 'cache');
    load(dir, cache);
    const folder = dirname(cachedFiles(cache)[0]!);
    chmodSync(folder, 0o777);
    expect(load(dir, cache).states).toEqual({ 'main.cjs': 'missing', 'part.cjs': 'missing' });
  });

  it('is found under BERTH_COMPILE_CACHE, a systemd unit’s CACHE_DIRECTORY, XDG_CACHE_HOME or ~/.cache, per Node.js version and V8 flags, and can be turned off', () => {
    const perNode = `${process.version}-${process.arch}-${v8.cachedDataVersionTag().toString(16)}`;
    expect(compileCacheDirectory({ BERTH_COMPILE_CACHE: '/srv/cache', HOME: '/home/a' })).toBe(
      join('/srv/cache', perNode),
    );
    expect(
      compileCacheDirectory({
        CACHE_DIRECTORY: '/var/cache/berth/shop:/var/cache/other',
        XDG_CACHE_HOME: '/x',
      }),
    ).toBe(join('/var/cache/berth/shop/compile', perNode));
    expect(compileCacheDirectory({ XDG_CACHE_HOME: '/x', HOME: '/home/a' })).toBe(
      join('/x/berth/compile', perNode),
    );
    expect(compileCacheDirectory({ HOME: '/home/a' })).toBe(join('/home/a/.cache/berth/compile', perNode));
    for (const off of ['false', 'off', '0', 'no', 'FALSE'])
      expect(compileCacheDirectory({ BERTH_COMPILE_CACHE: off, HOME: '/home/a' })).toBeUndefined();
  });

  it('berth runs, without a cache, for a user with no HOME and no passwd entry (a container’s arbitrary uid)', () => {
    const version = runAsAnotherUser(54321, berthBin, ['--version'], { cwd: '/', withoutHome: true });
    expect(version.trim()).toBe(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version);
  });

  it('berth start writes the compiled code of its bundle a few seconds after it starts, and the next run uses it', async () => {
    const cache = join(tempDir(), 'cache');
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_COMPILE_CACHE: cache },
    });
    expect((await fetch(`${server.url}/books?limit=1`)).status).toBe(200);
    const deadline = Date.now() + 20_000;
    while (!cached(cache).includes('berth.cjs.v8')) {
      if (Date.now() > deadline) throw new Error(`no compiled code in ${cache} 20 s after the start`);
      await new Promise((done) => setTimeout(done, 200));
    }
    // The bundle files the start loaded (the entry, the shared chunk, the runtime helpers).
    const bundle = readdirSync(join(repoRoot, 'dist', 'bundle'));
    for (const name of cached(cache)) expect(bundle).toContain(name.slice(0, -'.v8'.length));

    // Another run of the bundle, in a fresh process with the same flags, takes the code.
    const script = `
      const { compileCacheDirectory, requireWithCompileCache } = await import(${JSON.stringify(loader)});
      process.argv = [process.execPath, 'berth', '--version'];
      const loaded = requireWithCompileCache(${JSON.stringify(join(repoRoot, 'dist', 'bundle', 'berth.cjs'))}, {
        directory: compileCacheDirectory({ BERTH_COMPILE_CACHE: ${JSON.stringify(cache)} }),
        writeDelay: 60_000,
      });
      process.on('exit', () => console.log(JSON.stringify(Object.fromEntries([...loaded.states].map(([file, state]) => [file.split('/').pop(), state])))));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    const states = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, string>;
    expect(states['berth.cjs']).toBe('used');
    expect(Object.values(states).every((state) => state === 'used')).toBe(true);
  }, 30_000);
});
