import { createReadStream, createWriteStream, existsSync, statSync, type WriteStream } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import {
  BerthError,
  type ErrorTable,
  importedRecord,
  type App,
  type CollectionDefinition,
  type Storage,
} from '../core/internal.js';
import { chosenStorage } from '../node/data/storage-drivers/registry.js';
import { CommandError } from './command-error.js';
import { exitCodes } from './exit-codes.js';
import { importProgress, perSecond } from './import-progress.js';
import { collectionNamed, lockForWriting, openProjectStorage, settingsOf } from './project-storage.js';
import { formatOf, readRecords, type ReadRecord } from './record-files.js';

const help = `
Formats (from the file's name, or --format):
  ndjson  one JSON object a line (.ndjson, .jsonl): {"title": "Dune", "year": 1965}
  csv     a header row naming the columns, then a row a record (RFC 4180: cells
          with commas, quotes or line ends in double quotes, a quote doubled).
          Cells are read by their field's kind: numbers, booleans (true, false,
          1, 0), JSON for json fields, text for the rest. An empty cell is no
          value (null, or the field's default when it is required and has
          one); "" is empty text. A column that is not a field refuses the file.

Every record is checked as POST /<collection> checks it (the same schema and
defaults, references and unique fields; read-only fields may be given). An
id, createdAt and updatedAt given with a record are kept. A refused record is
reported with its line and reason on stderr and the rest are imported; the
exit code is 1 when any was refused.

Write hooks and change events are off unless --hooks. Into SQLite the import is
one transaction (nothing is imported if it is stopped; with --hooks, one every
10,000 records) and the data directory is locked: stop a server that runs on
it first. Into PostgreSQL it commits every 1,000 records while a server may
serve.`;

/**
 * Records a load holds before it commits, where it commits as it goes:
 * a database server (PostgreSQL), and an embedded one (SQLite) with hooks
 * (whose events wait for the commit). SQLite's text index costs about
 * 0.15 s a commit, so its batches are larger.
 */
const batchRecords = { embedded: 10_000, server: 1000 };
/** A guess at the bytes of a record in a file, to tell a large load from a small one. */
const bytesPerRecord = 200;
/** Records from which an import is large: its slow steps are told, and indexes may be made again at the end. */
const largeImport = 10_000;

interface ImportFlags {
  format?: string;
  allOrNothing?: boolean;
  hooks?: boolean;
  errors?: string;
  config?: string;
}

/** Why a record was refused, in one line: each field that failed, or the error's message. */
function reasonOf(error: BerthError): string {
  return error.errors?.length
    ? error.errors.map((each) => `${each.path}: ${each.message}`).join('; ')
    : error.message;
}

/** Where refused records are told: stderr (the first hundred), and the --errors file. */
function refusals(say: (text: string) => void, file: string | undefined) {
  const shownAtMost = 100;
  let count = 0;
  const out: WriteStream | undefined = file ? createWriteStream(resolve(file), { mode: 0o600 }) : undefined;
  return {
    count: () => count,
    refuse(line: number, reason: string, row: unknown): void {
      count++;
      if (count <= shownAtMost) say(`line ${line}: ${reason}`);
      else if (count === shownAtMost + 1)
        say(
          `… more refused records are not shown here${file ? `: every one is in ${file}` : ': add --errors FILE to have each'}`,
        );
      out?.write(`${JSON.stringify({ line, reason, row })}\n`);
    },
    async close(): Promise<void> {
      if (out)
        await new Promise<void>((done, fail) =>
          out.end((error?: Error | null) => (error ? fail(error) : done())),
        );
    },
  };
}

/** Thrown inside the load to roll it back: --all-or-nothing and a record was refused. */
class NothingImported extends Error {}

/**
 * Whether the database refused the record (a taken unique value, a hook's refusal with a module's code), not the
 * import itself: a code whose status, in the app's table, is below 500.
 */
const refusesRecord = (error: unknown, errors: ErrorTable): error is BerthError =>
  error instanceof BerthError && (errors.get(error.code)?.status ?? 500) < 500;

/** The file's records into the collection; answers how many were imported. */
async function load(
  storage: Storage,
  collection: CollectionDefinition,
  records: AsyncIterator<ReadRecord>,
  options: {
    flags: ImportFlags;
    oneTransaction: boolean;
    /** Records a transaction holds when not one for the whole file. */
    batch: number;
    rebuildIndexes: boolean;
    /** A file of many records: the slow steps at the end are told. */
    large: boolean;
    progress: ReturnType<typeof importProgress>;
    refused: ReturnType<typeof refusals>;
    errors: ErrorTable;
  },
): Promise<number> {
  const { flags, progress, refused } = options;
  let imported = 0;
  let done = false;
  while (!done) {
    let added = 0;
    try {
      await storage.load(
        collection,
        async (add) => {
          while (options.oneTransaction || added < options.batch) {
            const next = await records.next();
            if (next.done) {
              done = true;
              break;
            }
            const read = next.value;
            progress.record();
            if ('error' in read) {
              refused.refuse(read.line, read.error, read.raw);
              continue;
            }
            try {
              await add(importedRecord(collection, read.input));
              added++;
            } catch (error) {
              if (!refusesRecord(error, options.errors)) throw error;
              refused.refuse(read.line, reasonOf(error), read.raw);
            }
          }
          if (flags.allOrNothing && refused.count() > 0) throw new NothingImported();
        },
        {
          hooks: flags.hooks === true,
          rebuildIndexes: options.rebuildIndexes,
          ...(options.large ? { onStep: (detail: string) => progress.say(detail) } : {}),
        },
      );
    } catch (error) {
      if (error instanceof NothingImported) return 0;
      throw error;
    }
    imported += added;
  }
  return imported;
}

/**
 * `<binary> import <collection> [file]`: loads records from NDJSON or CSV,
 * each checked as a create is; refused ones are reported by line and the
 * rest imported (or none, with --all-or-nothing).
 */
export function addImportCommand(program: Command, app: App): void {
  program
    .command('import <collection> [file]')
    .description(
      'load records into a collection from NDJSON or CSV (FILE, or standard input): each checked as a create is, refused ones reported by line',
    )
    .option('--format <format>', 'ndjson or csv (default: from the file name)')
    .option('--all-or-nothing', 'import nothing when any record is refused')
    .option('--hooks', 'run the collection’s write hooks and make change events, as a POST does (slower)')
    .option('--errors <file>', 'also write each refused record to FILE as NDJSON: {"line", "reason", "row"}')
    .option('-c, --config <file>', 'config file (default: ./berth.config.json)')
    .addHelpText('after', help)
    .action(async (name: string, file: string | undefined, flags: ImportFlags) => {
      const collection = collectionNamed(app, name);
      const fromStdin = file === undefined || file === '-';
      const format = formatOf(fromStdin ? undefined : file, flags.format);
      const source = fromStdin ? undefined : resolve(file);
      if (source && !existsSync(source)) throw new CommandError(`there is no file ${source}`);
      const totalBytes = source ? statSync(source).size : undefined;
      const settings = settingsOf(app, flags.config);
      const embedded = chosenStorage(settings).driver.embedded;
      const lock = embedded ? lockForWriting(app, settings.dataDir.value, 'imported') : undefined;
      const started = Date.now();
      const progress = importProgress({ collection: collection.name, totalBytes });
      const refused = refusals((text) => progress.say(text), flags.errors);
      let storage: Storage | undefined;
      let imported: number;
      try {
        storage = openProjectStorage(app, settings, { mustExist: false });
        // A collection the import makes starts empty: its seed records would be mixed with the file's.
        await storage.migrate(
          app.collections,
          (step) => progress.say(`migrating ${step.collection}: ${step.action} ${step.detail}`),
          { unseeded: [collection.name] },
        );
        const expected = totalBytes === undefined ? 0 : Math.floor(totalBytes / bytesPerRecord);
        // Indexes made again at the end pay off when the file holds about as many records as the table.
        const rebuildIndexes =
          embedded &&
          !flags.hooks &&
          expected >= largeImport &&
          (await storage.repository(collection).list({ limit: 1, countLimit: expected })).totalCapped !==
            true;
        const stream: Readable = source
          ? createReadStream(source, { highWaterMark: 1 << 20 })
          : process.stdin;
        const records = readRecords(stream, format, collection, progress.bytes)[Symbol.asyncIterator]();
        imported = await load(storage, collection, records, {
          flags,
          errors: app.errors,
          oneTransaction: flags.allOrNothing === true || (embedded && !flags.hooks),
          batch: embedded ? batchRecords.embedded : batchRecords.server,
          rebuildIndexes,
          large: expected >= largeImport,
          progress,
          refused,
        });
      } finally {
        progress.stop();
        await refused.close();
        await storage?.close();
        lock?.release();
      }
      const count = refused.count();
      const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
      process.stdout.write(
        flags.allOrNothing && count > 0
          ? `imported nothing into ${collection.name}: ${count} record${count === 1 ? ' was' : 's were'} refused and --all-or-nothing was given (${took})\n`
          : `imported ${imported.toLocaleString('en-US')} ${collection.name} record${imported === 1 ? '' : 's'}, refused ${count.toLocaleString('en-US')}, in ${took} (${perSecond(imported, started)} records/s)\n`,
      );
      if (count > 0) process.exitCode = exitCodes.failure;
    });
}
