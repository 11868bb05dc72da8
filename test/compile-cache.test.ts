import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCacheDirectory } from '../src/node/compile-cache.js';
import { berthBin, repoRoot, startBinary, tempDir } from './helpers/processes.js';

const loader = join(repoRoot, 'dist', 'node', 'compile-cache.js');

/** A folder of CommonJS files like the bundle's: an entry requiring a chunk and a built-in. */
function fixture(part: string): string {
  const dir = join(tempDir('berth-compile-'), 'bundle');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'main.cjs'),
    "const { word } = require('./part.cjs');\nmodule.exports = { answer: `${word}:${require('node:path').basename(__filename)}` };\n",
  );
  writeFileSync(join(dir, 'part.cjs'), `exports.word = ${JSON.stringify(part)};\n`);
  return dir;
}

/** The names of the compiled code kept under a cache directory, sorted. */
function cached(cache: string): string[] {
  return readdirSync(cache, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.v8'))
    .map((name) => basename(name))
    .sort();
}

/** Loads the fixture in a fresh process and writes the cache; its answer and each file's state. */
function load(dir: string, cache: string): { answer: string; states: Record<string, string> } {
  const script = `
    import { createRequire } from 'node:module';
    const { requireWithCompileCache } = await import(${JSON.stringify(loader)});
    const entry = ${JSON.stringify(join(dir, 'main.cjs'))};
    const loaded = requireWithCompileCache(entry, { directory: ${JSON.stringify(cache)} });
    loaded.write();
    const states = Object.fromEntries([...loaded.states].map(([file, state]) => [file.slice(${dir.length + 1}), state]));
    console.log(JSON.stringify({ answer: createRequire(import.meta.url)(entry).answer, states }));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

describe('the compile cache of the berth command', () => {
  it('keeps V8’s compiled code of a folder’s CommonJS files and uses it on the next load', () => {
    const dir = fixture('first');
    const cache = join(tempDir(), 'cache');
    const cold = load(dir, cache);
    expect(cold).toEqual({
      answer: 'first:main.cjs',
      states: { 'main.cjs': 'missing', 'part.cjs': 'missing' },
    });
    expect(cached(cache)).toEqual([
      expect.stringMatching(/^main\.cjs\..+\.v8$/),
      expect.stringMatching(/^part\.cjs\..+\.v8$/),
    ]);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    const warm = load(dir, cache);
    expect(warm).toEqual({ answer: 'first:main.cjs', states: { 'main.cjs': 'used', 'part.cjs': 'used' } });
  });

  it('never runs stale code: a changed file of the same length is compiled anew, and its old code removed', () => {
    const dir = fixture('aaaa');
    const cache = join(tempDir(), 'cache');
    load(dir, cache);
    const [, before] = cached(cache);
    writeFileSync(join(dir, 'part.cjs'), readFileSync(join(dir, 'part.cjs'), 'utf8').replace('aaaa', 'bbbb'));
    expect(load(dir, cache)).toEqual({
      answer: 'bbbb:main.cjs',
      states: { 'main.cjs': 'used', 'part.cjs': 'missing' },
    });
    const [, after] = cached(cache);
    expect(after).toMatch(/^part\.cjs\./);
    expect(after).not.toBe(before);
    expect(cached(cache)).toHaveLength(2);
    expect(load(dir, cache).states).toEqual({ 'main.cjs': 'used', 'part.cjs': 'used' });
  });

  it('a cache that cannot be written only costs the compiling', () => {
    const dir = fixture('kept');
    const blocked = join(tempDir(), 'not-a-directory');
    writeFileSync(blocked, 'a file where the cache would go');
    expect(load(dir, join(blocked, 'cache'))).toEqual({
      answer: 'kept:main.cjs',
      states: { 'main.cjs': 'missing', 'part.cjs': 'missing' },
    });
  });

  it('is found under BERTH_COMPILE_CACHE, a systemd unit’s CACHE_DIRECTORY, XDG_CACHE_HOME or ~/.cache, per Node.js version, and can be turned off', () => {
    const perNode = `${process.version}-${process.arch}`;
    expect(compileCacheDirectory({ BERTH_COMPILE_CACHE: '/srv/cache', HOME: '/home/a' })).toBe(
      join('/srv/cache', perNode),
    );
    expect(compileCacheDirectory({ XDG_CACHE_HOME: '/x', HOME: '/home/a' })).toBe(
      join('/x/berth/compile', perNode),
    );
    expect(compileCacheDirectory({ HOME: '/home/a' })).toBe(join('/home/a/.cache/berth/compile', perNode));
    for (const off of ['false', 'off', '0', 'no', 'FALSE'])
      expect(compileCacheDirectory({ BERTH_COMPILE_CACHE: off, HOME: '/home/a' })).toBeUndefined();
  });

  it('berth start writes the compiled code of its bundle a few seconds after it starts', async () => {
    const cache = join(tempDir(), 'cache');
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_COMPILE_CACHE: cache },
    });
    expect((await fetch(`${server.url}/books?limit=1`)).status).toBe(200);
    const deadline = Date.now() + 20_000;
    while (!(existsSync(cache) && cached(cache).length > 0)) {
      if (Date.now() > deadline) throw new Error(`no compiled code in ${cache} 20 s after the start`);
      await new Promise((done) => setTimeout(done, 200));
    }
    // The bundle files the start loaded (the entry, the shared chunk, the runtime helpers), each once.
    const bundle = readdirSync(join(repoRoot, 'dist', 'bundle'));
    const names = cached(cache).map((name) => name.slice(0, name.indexOf('.cjs.') + 4));
    expect(names).toContain('berth.cjs');
    expect(names.length).toBeGreaterThanOrEqual(2);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(bundle).toContain(name);
  }, 30_000);
});
