import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { io as connect } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { CsvParser } from '../src/cli/csv.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, bookshopBin, repoRoot, startBinary, tempDir } from './helpers/processes.js';

/** A project's own binary with a collection of every field kind, and write hooks that leave a trace. */
const catalogBin = join(repoRoot, 'test', 'fixtures', 'import-app.mjs');

/** This process's environment without PORT, BERTH_*, DATABASE_URL or REDIS_URL, plus `env`. */
function cleanEnv(env: Record<string, string>): Record<string, string> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(PORT|BERTH_|DATABASE_URL|REDIS_URL)/.test(key)),
  ) as Record<string, string>;
  return { ...clean, ...env };
}

/** Runs a command of a binary to its end, in `cwd`. */
function cli(bin: string, cwd: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The records `export` writes as NDJSON, parsed. */
function exported(bin: string, cwd: string, collection: string, env: Record<string, string> = {}) {
  const result = cli(bin, cwd, ['export', collection], env);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Writes a file in `dir` and answers its path. */
function file(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const ndjson = (records: object[]): string =>
  records.map((record) => JSON.stringify(record)).join('\n') + '\n';

describe('berth import and export (SQLite)', () => {
  it('imports NDJSON books, keeping a given id and timestamps, with the defaults a create gives', () => {
    const cwd = tempDir();
    const books = file(
      cwd,
      'books.ndjson',
      ndjson([
        {
          id: 'dune',
          title: 'Dune',
          author: 'Frank Herbert',
          year: 1965,
          createdAt: '2020-01-02T03:04:05+01:00',
        },
        { title: '  Kindred ', author: 'Octavia E. Butler' },
      ]),
    );
    const result = cli(berthBin, cwd, ['import', 'books', books]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^imported 2 books records, refused 0, in [\d.]+ s/);
    const records = exported(berthBin, cwd, 'books');
    // A collection the import makes has no seed records: the file is its content.
    expect(records).toHaveLength(2);
    expect(records.find((record) => record.id === 'dune')).toEqual({
      id: 'dune',
      title: 'Dune',
      author: 'Frank Herbert',
      year: 1965,
      isbn: null,
      createdAt: '2020-01-02T02:04:05.000Z',
      updatedAt: '2020-01-02T02:04:05.000Z',
    });
    const kindred = records.find((record) => record.id !== 'dune')!;
    expect(kindred).toMatchObject({ title: 'Kindred', year: null, isbn: null });
    expect(kindred.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports bad records by line with the reason, imports the rest, and exits 1', () => {
    const cwd = tempDir();
    const books = file(
      cwd,
      'books.jsonl',
      [
        JSON.stringify({ title: 'Good one', author: 'A' }),
        JSON.stringify({ title: '', author: 'A' }),
        '',
        'not json',
        JSON.stringify({ title: 'Extra', author: 'A', pages: 3 }),
        JSON.stringify({ title: 'Year', author: 'A', year: '1990' }),
        JSON.stringify(['an array']),
        JSON.stringify({ id: 'x', title: 'Late', author: 'A', updatedAt: '2020-01-01T00:00:00Z' }),
        JSON.stringify({ title: 'Good two', author: 'B', isbn: '978-0441172719' }),
      ].join('\n'),
    );
    const errors = join(cwd, 'refused.ndjson');
    const result = cli(berthBin, cwd, ['import', 'books', books, '--errors', errors]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^imported 2 books records, refused 6/);
    expect(result.stderr).toContain('line 2: title: must not be empty');
    expect(result.stderr).toMatch(/line 4: is not JSON/);
    expect(result.stderr).toContain('line 5: pages: is not a known field: remove it');
    expect(result.stderr).toMatch(/line 6: year: .*number/);
    expect(result.stderr).toContain('line 7: must be a JSON object');
    expect(result.stderr).toContain('line 8: updatedAt: comes with a createdAt, or not at all');
    expect(
      exported(berthBin, cwd, 'books')
        .map((record) => record.title)
        .sort(),
    ).toEqual(['Good one', 'Good two']);
    const refused = readFileSync(errors, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; reason: string; row: unknown });
    expect(refused.map((each) => each.line)).toEqual([2, 4, 5, 6, 7, 8]);
    expect(refused[0]).toEqual({
      line: 2,
      reason: 'title: must not be empty',
      row: { title: '', author: 'A' },
    });
    expect(refused[1]!.row).toBe('not json');
  });

  it('with --all-or-nothing imports nothing when a record is refused, and says which', () => {
    const cwd = tempDir();
    const good = ndjson([
      { title: 'One', author: 'A' },
      { title: 'Two', author: 'B' },
    ]);
    const books = file(cwd, 'books.ndjson', good + JSON.stringify({ title: 'Three', author: '' }) + '\n');
    const result = cli(berthBin, cwd, ['import', 'books', books, '--all-or-nothing']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 3: author: must not be empty');
    expect(result.stdout).toMatch(/imported nothing into books: 1 record was refused and --all-or-nothing/);
    expect(exported(berthBin, cwd, 'books')).toEqual([]);
    // The same file without the bad record goes in whole.
    const fine = file(cwd, 'fine.ndjson', good);
    expect(cli(berthBin, cwd, ['import', 'books', fine, '--all-or-nothing']).code).toBe(0);
    expect(exported(berthBin, cwd, 'books')).toHaveLength(2);
  });

  it('refuses a unique value taken in the database or earlier in the file, and a taken id, as bad records', () => {
    const cwd = tempDir();
    const first = file(
      cwd,
      'first.ndjson',
      ndjson([{ id: 'b1', title: 'Dune', author: 'F', isbn: '978-0441172719' }]),
    );
    expect(cli(berthBin, cwd, ['import', 'books', first]).code).toBe(0);
    const second = file(
      cwd,
      'second.ndjson',
      ndjson([
        { title: 'Copy', author: 'F', isbn: '978-0441172719' },
        { title: 'New', author: 'G', isbn: '978-0547928227' },
        { title: 'Twice', author: 'G', isbn: '978-0547928227' },
        { id: 'b1', title: 'Same id', author: 'H' },
        { title: 'Last', author: 'I' },
      ]),
    );
    const result = cli(berthBin, cwd, ['import', 'books', second]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 1: another books record has the same isbn');
    expect(result.stderr).toContain('line 3: another books record has the same isbn');
    expect(result.stderr).toContain('line 4: another books record has the same id');
    expect(
      exported(berthBin, cwd, 'books')
        .map((record) => record.title)
        .sort(),
    ).toEqual(['Dune', 'Last', 'New']);
  });

  it('reads CSV by RFC 4180 (commas, quotes and line ends in quotes, CRLF) and each cell by its field’s kind', () => {
    const cwd = tempDir();
    const csv = file(
      cwd,
      'items.csv',
      'title,note,count,price,sold,tags,state,arrived,checked,shelf,code\r\n' +
        '"a, b","say ""hi""\nthere",3,1.5,true,"[1,""x""]",used,2024-02-29,2024-01-01T10:00:00+02:00,,X1\r\n' +
        'plain,"",,,0,,,,,,\r\n' +
        'bad,,x,,maybe,,,,,,\r\n' +
        'short,1\r\n' +
        '"open, "quote",,,,,,,,,,\r\n' +
        'last,,,-2e1,FALSE,{},,,,,',
    );
    const result = cli(catalogBin, cwd, ['import', 'items', csv]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^imported 3 items records, refused 3/);
    // A record starts on its line; the first spans two (a line end in quotes).
    expect(result.stderr).toContain('line 5: count: "x" is not a number; sold: "maybe" is not true or false');
    expect(result.stderr).toContain('line 6: has 2 cells where the header has 11 columns');
    expect(result.stderr).toContain('line 7: a quoted cell must end at a comma or the end of the line');
    const items = exported(catalogBin, cwd, 'items');
    const byTitle = Object.fromEntries(items.map((item) => [item.title, item]));
    expect(Object.keys(byTitle).sort()).toEqual(['a, b', 'last', 'plain']);
    expect(byTitle['a, b']).toMatchObject({
      note: 'say "hi"\nthere',
      count: 3,
      price: 1.5,
      sold: true,
      tags: [1, 'x'],
      state: 'used',
      arrived: '2024-02-29',
      checked: '2024-01-01T08:00:00.000Z',
      shelf: null,
      code: 'X1',
    });
    // An empty cell: the default of a required field that has one, null otherwise; "" is empty text.
    expect(byTitle.plain).toMatchObject({
      note: '',
      count: 1,
      price: null,
      sold: false,
      tags: null,
      state: 'new',
    });
    expect(byTitle.last).toMatchObject({ note: null, price: -20, sold: false, tags: {} });
  });

  it('refuses a CSV whose header names a column that is not a field, importing nothing', () => {
    const cwd = tempDir();
    const csv = file(cwd, 'books.csv', 'title,author,pages\nDune,Frank Herbert,412\n');
    const result = cli(berthBin, cwd, ['import', 'books', csv]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'the header (line 1) names "pages", which is not a field of books, so nothing was imported',
    );
    expect(exported(berthBin, cwd, 'books')).toEqual([]);
  });

  it('refuses a reference to a record that does not exist, and keeps one that does', () => {
    const cwd = tempDir();
    const shelves = file(cwd, 'shelves.ndjson', ndjson([{ id: 'back', label: 'back' }]));
    expect(cli(catalogBin, cwd, ['import', 'shelves', shelves]).code).toBe(0);
    const items = file(
      cwd,
      'items.ndjson',
      ndjson([
        { title: 'on the back', shelf: 'back' },
        { title: 'nowhere', shelf: 'attic' },
      ]),
    );
    const result = cli(catalogBin, cwd, ['import', 'items', items]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 2: shelf: no shelves record has the id "attic"');
    // items was made (and seeded) by the shelves import: only the import's own collection starts empty.
    expect(exported(catalogBin, cwd, 'items').map((item) => [item.title, item.shelf])).toEqual(
      expect.arrayContaining([
        ['SEEDED ITEM', null], // seeded through the data layer: its hooks ran
        ['on the back', 'back'],
      ]),
    );
    expect(exported(catalogBin, cwd, 'items')).toHaveLength(2);
  });

  it('runs the write hooks only with --hooks, and a hook’s refusal refuses the record alone', () => {
    const cwd = tempDir();
    const items = file(cwd, 'items.ndjson', ndjson([{ title: 'quiet' }, { title: 'refuse me' }]));
    expect(cli(catalogBin, cwd, ['import', 'items', items]).code).toBe(0);
    expect(exported(catalogBin, cwd, 'audit')).toEqual([]);
    expect(
      exported(catalogBin, cwd, 'items')
        .map((item) => item.title)
        .sort(),
    ).toEqual(['quiet', 'refuse me']);

    const other = tempDir();
    const hooked = cli(catalogBin, other, ['import', 'items', items, '--hooks']);
    expect(hooked.code).toBe(1);
    expect(hooked.stderr).toMatch(/line 2: not this one/);
    const stored = exported(catalogBin, other, 'items');
    expect(stored.map((item) => item.title)).toEqual(['QUIET']);
    // The afterCreate hook's write is in the same transaction: one entry, for the record kept.
    expect(exported(catalogBin, other, 'audit').map((entry) => entry.entry)).toEqual([
      `created ${String(stored[0]!.id)}`,
    ]);
  });

  it('exports in id order as NDJSON and CSV, and either imports into an empty database as it was', () => {
    const cwd = tempDir();
    const items = file(
      cwd,
      'items.ndjson',
      ndjson([
        { id: 'c', title: 'third, with a comma', note: ' spaced ', tags: { a: [1, null] }, sold: true },
        { id: 'a', title: 'first', note: '', price: 0.1, checked: '2024-05-01T12:00:00Z', shelf: null },
        { id: 'b', title: 'second "quoted"', note: 'two\nlines', count: 0, arrived: '2000-01-01', code: 'B' },
      ]),
    );
    expect(cli(catalogBin, cwd, ['import', 'items', items]).code).toBe(0);
    const original = exported(catalogBin, cwd, 'items');
    expect(original.map((item) => item.id)).toEqual(['a', 'b', 'c']);
    expect(Object.keys(original[0]!)).toEqual([
      'id',
      'title',
      'note',
      'code',
      'count',
      'price',
      'sold',
      'tags',
      'state',
      'arrived',
      'checked',
      'shelf',
      'createdAt',
      'updatedAt',
    ]);
    for (const format of ['ndjson', 'csv']) {
      const out = join(cwd, `items-out.${format}`);
      const written = cli(catalogBin, cwd, ['export', 'items', '--out', out]);
      expect(written.code, written.stderr).toBe(0);
      expect(written.stderr).toContain(`exported 3 items records to ${out}`);
      const empty = tempDir();
      const back = cli(catalogBin, empty, ['import', 'items', out]);
      expect(back.code, back.stderr).toBe(0);
      expect(exported(catalogBin, empty, 'items')).toEqual(original);
      // Exported again, byte for byte the same file.
      const again = join(empty, `again.${format}`);
      expect(cli(catalogBin, empty, ['export', 'items', '--out', again]).code).toBe(0);
      expect(readFileSync(again, 'utf8')).toBe(readFileSync(out, 'utf8'));
    }
  });

  it('refuses to import into SQLite while a server uses the data directory, naming it', async () => {
    const cwd = tempDir();
    const server = await startBinary(berthBin, { cwd, env: { PORT: '0' } });
    const books = file(cwd, 'books.ndjson', ndjson([{ title: 'Dune', author: 'F' }]));
    const result = cli(berthBin, cwd, ['import', 'books', books]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `a server (pid ${server.child.pid}, http://localhost:${server.port}) is using`,
    );
    expect(result.stderr).toContain('so nothing was imported');
    // Export reads beside it.
    const listed = cli(berthBin, cwd, ['export', 'books']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toHaveLength(7);
  });

  it('without --hooks cuts the change log, so a subscriber resuming from before is told to read again; with --hooks it replays', async () => {
    const cwd = tempDir();
    const env = { PORT: '0', BERTH_ADMIN_TOKEN: 'import-resume-token' };
    const subscribe = async (url: string, since?: number) => {
      const socket = connect(url, {
        reconnection: false,
        forceNew: true,
        transports: ['websocket'],
        auth: { token: env.BERTH_ADMIN_TOKEN },
      });
      const titles: string[] = [];
      socket.on('books:created', (book: { title: string }) => titles.push(book.title));
      const ack = (await socket.emitWithAck(
        'subscribe',
        since === undefined ? 'books' : { topic: 'books', since },
      )) as { ok: boolean; seq: number; resync?: boolean; reason?: string };
      return { socket, titles, ack };
    };
    const serve = async () => {
      const server = await startBinary(berthBin, { cwd, env });
      const { socket, ack } = await subscribe(server.url);
      socket.disconnect();
      server.child.kill('SIGTERM');
      await server.exited;
      return ack.seq;
    };
    const before = await serve();

    const quiet = file(cwd, 'quiet.ndjson', ndjson([{ title: 'Quiet', author: 'Q' }]));
    expect(cli(berthBin, cwd, ['import', 'books', quiet]).code).toBe(0);
    const server = await startBinary(berthBin, { cwd, env });
    const resumed = await subscribe(server.url, before);
    expect(resumed.ack).toMatchObject({ ok: true, resync: true });
    expect(resumed.ack.reason).toMatch(/no longer kept/);
    expect(resumed.ack.seq).toBeGreaterThan(before);
    resumed.socket.disconnect();
    server.child.kill('SIGTERM');
    await server.exited;

    const hooked = file(cwd, 'hooked.ndjson', ndjson([{ title: 'Hooked', author: 'H' }]));
    expect(cli(berthBin, cwd, ['import', 'books', hooked, '--hooks']).code).toBe(0);
    const again = await startBinary(berthBin, { cwd, env });
    const replayed = await subscribe(again.url, resumed.ack.seq);
    expect(replayed.ack.resync).toBeUndefined();
    await expect.poll(() => replayed.titles).toEqual(['Hooked']);
    replayed.socket.disconnect();
    again.child.kill('SIGTERM');
    await again.exited;
  });

  it('is a command of a project’s own binary', () => {
    const cwd = tempDir();
    const help = cli(bookshopBin, cwd, ['--help']);
    expect(help.stdout).toMatch(/import \[options\] <collection> \[file\]/);
    expect(help.stdout).toMatch(/export \[options\] <collection>/);
    const authors = file(cwd, 'authors.csv', 'name,born\nN. K. Jemisin,1972\n');
    const result = cli(bookshopBin, cwd, ['import', 'authors', authors]);
    expect(result.code, result.stderr).toBe(0);
    expect(exported(bookshopBin, cwd, 'authors').map((author) => [author.name, author.born])).toEqual([
      ['N. K. Jemisin', 1972],
    ]);
    expect(cli(bookshopBin, cwd, ['import', 'readers', authors]).stderr).toContain(
      'bookshop has no collection "readers": its collections are books, authors',
    );
  });
});

describe('the CSV reader', () => {
  const text = 'a,b,c\r\n"x, ""y""",,""\n"two\r\nlines",2,3\n\n"bad"x,1,2\nlast,"",\u00e9\u{1F600}';
  const read = (pieces: string[]) => {
    const parser = new CsvParser();
    return [...pieces.flatMap((piece) => parser.push(piece)), ...parser.end()];
  };
  const cell = (text: string, quoted = false) => ({ text, quoted });

  it('reads the same records whatever pieces the text comes in', () => {
    const whole = read([text]);
    expect(whole).toEqual([
      { line: 1, cells: [cell('a'), cell('b'), cell('c')] },
      { line: 2, cells: [cell('x, "y"', true), cell(''), cell('', true)] },
      { line: 3, cells: [cell('two\r\nlines', true), cell('2'), cell('3')] },
      {
        line: 6,
        cells: [cell('bad', true), cell('1'), cell('2')],
        error: 'a quoted cell must end at a comma or the end of the line',
      },
      { line: 7, cells: [cell('last'), cell('', true), cell('\u00e9\u{1F600}')] },
    ]);
    for (let cut = 1; cut < text.length; cut++) {
      expect(read([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    }
    expect(read([...text])).toEqual(whole);
  });

  it('says when a quote is never closed', () => {
    expect(read(['a\n"open,1\n2'])).toEqual([
      { line: 1, cells: [cell('a')] },
      { line: 2, cells: [cell('open,1\n2', true)], error: 'a quote opened on this line is never closed' },
    ]);
  });
});

describe('berth import and export (PostgreSQL)', () => {
  const urlOf = (schema: string) => ({
    DATABASE_URL: `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
  });

  it('imports, refuses conflicts and bad references by line, and round-trips through export', async () => {
    const env = urlOf(await freshSchema());
    const cwd = tempDir();
    const items = file(
      cwd,
      'items.ndjson',
      ndjson([
        { id: 'a', title: 'first', code: 'A', tags: [1], checked: '2024-05-01T12:00:00Z' },
        { id: 'b', title: 'taken code', code: 'A' },
        { id: 'c', title: 'nowhere', shelf: 'attic' },
        { id: 'a', title: 'taken id' },
        { id: 'd', title: 'fourth, "quoted"', sold: true, price: 2.5, note: '' },
      ]),
    );
    const result = cli(catalogBin, cwd, ['import', 'items', items], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^imported 2 items records, refused 3/);
    expect(result.stderr).toContain('line 2: another items record has the same code');
    expect(result.stderr).toContain('line 3: shelf: no shelves record has the id "attic"');
    expect(result.stderr).toContain('line 4: another items record has the same id');
    const original = exported(catalogBin, cwd, 'items', env);
    expect(original.map((item) => item.id)).toEqual(['a', 'd']);

    const csv = join(cwd, 'items.csv');
    expect(cli(catalogBin, cwd, ['export', 'items', '--out', csv], env).code).toBe(0);
    const other = urlOf(await freshSchema());
    const back = cli(catalogBin, cwd, ['import', 'items', csv, '--all-or-nothing'], other);
    expect(back.code, back.stderr).toBe(0);
    expect(exported(catalogBin, cwd, 'items', other)).toEqual(original);
    // Again: every id is taken now, so --all-or-nothing changes nothing.
    const twice = cli(catalogBin, cwd, ['import', 'items', csv, '--all-or-nothing'], other);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('line 2: another items record has the same id');
    expect(twice.stderr).toContain('line 3: another items record has the same id');
    expect(exported(catalogBin, cwd, 'items', other)).toEqual(original);
  });
});
