// `berth import` and `berth export` of many books (bench/data.mjs's generator):
// seconds for NDJSON and CSV into a new SQLite project, records a second with
// --hooks on and off, and an export. Measurements to read, never a pass or a fail.
//
//   BENCH_IMPORT_ROWS   books in each file (default 1,000,000)
//   BENCH_HOOKS_ROWS    books imported with and without --hooks (default 100,000)
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { books } from './data.mjs';
import { table } from './lib.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const berth = join(root, 'bin', 'berth');
const rows = Number(process.env.BENCH_IMPORT_ROWS ?? 1_000_000);
const hookRows = Number(process.env.BENCH_HOOKS_ROWS ?? 100_000);

const csvCell = (value) =>
  value === null
    ? ''
    : /[",\n\r]/.test(String(value))
      ? `"${String(value).replace(/"/g, '""')}"`
      : String(value);

/** Writes `count` books to a file: NDJSON or CSV, with or without their ids and timestamps. */
export async function writeBooks(file, count, format, withIds) {
  const out = createWriteStream(file);
  const columns = withIds
    ? ['id', 'title', 'author', 'year', 'isbn', 'createdAt', 'updatedAt']
    : ['title', 'author', 'year', 'isbn'];
  if (format === 'csv') out.write(`${columns.join(',')}\n`);
  let chunk = '';
  for (const book of books(count)) {
    chunk +=
      format === 'csv'
        ? `${columns.map((name) => csvCell(book[name])).join(',')}\n`
        : `${JSON.stringify(Object.fromEntries(columns.map((name) => [name, book[name]])))}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise((done) => out.once('drain', done));
      chunk = '';
    }
  }
  out.write(chunk);
  await new Promise((done) => out.end(done));
}

/** Runs the berth binary in a directory; its seconds, and what it said. */
function timed(cwd, args) {
  const started = Date.now();
  const result = spawnSync(process.execPath, [berth, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, BERTH_MODE: 'release' },
  });
  const seconds = (Date.now() - started) / 1000;
  if (result.status !== 0) throw new Error(`berth ${args.join(' ')} failed:\n${result.stderr}`);
  return { seconds, said: result.stdout.trim() };
}

export async function benchImport() {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-import-'));
  try {
    const results = [];
    for (const [format, withIds] of [
      ['ndjson', true],
      ['csv', true],
      ['ndjson', false],
    ]) {
      const file = join(dir, `books-${withIds ? 'ids' : 'plain'}.${format}`);
      await writeBooks(file, rows, format, withIds);
      const cwd = mkdtempSync(join(dir, 'project-'));
      const { seconds, said } = timed(cwd, ['import', 'books', file]);
      results.push([
        `import ${rows.toLocaleString('en-US')} books, ${format}${withIds ? '' : ', no ids'}`,
        `${seconds.toFixed(1)} s`,
        said,
      ]);
      if (format === 'ndjson' && withIds) {
        const exported = timed(cwd, ['export', 'books', '--out', join(dir, 'exported.ndjson')]);
        results.push([
          `export ${rows.toLocaleString('en-US')} books, ndjson`,
          `${exported.seconds.toFixed(1)} s`,
          '',
        ]);
      }
      rmSync(cwd, { recursive: true, force: true });
    }
    const small = join(dir, 'books-hooks.ndjson');
    await writeBooks(small, hookRows, 'ndjson', false);
    for (const hooks of [false, true]) {
      const cwd = mkdtempSync(join(dir, 'project-'));
      const { seconds, said } = timed(cwd, ['import', 'books', small, ...(hooks ? ['--hooks'] : [])]);
      results.push([
        `import ${hookRows.toLocaleString('en-US')} books${hooks ? ', --hooks' : ''}`,
        `${seconds.toFixed(1)} s`,
        said,
      ]);
      rmSync(cwd, { recursive: true, force: true });
    }
    console.log('\n## import and export (SQLite, a new project each)\n');
    table([['what', 'time (whole command)', 'summary'], ...results]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
