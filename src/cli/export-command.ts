import { createWriteStream, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import type { App, Storage } from '../core/internal.js';
import { CommandError } from './command-error.js';
import { perSecond } from './import-progress.js';
import { collectionNamed, openProjectStorage, settingsOf } from './project-storage.js';
import { formatOf, recordWriter } from './record-files.js';

/** Records read per page, in id order. */
const pageRecords = 2000;

/** Writes text, waiting when the stream asks to (a slow pipe holds no more than a page). */
const writeTo = (out: Writable, text: string): Promise<void> =>
  out.write(text) ? Promise.resolve() : new Promise((done) => out.once('drain', () => done()));

/**
 * `<binary> export <collection>`: every record (id, fields, createdAt,
 * updatedAt) in id order, as NDJSON or CSV that `import` reads back, to a
 * file or stdout. A server may keep serving.
 */
export function addExportCommand(program: Command, app: App): void {
  program
    .command('export <collection>')
    .description(
      'write every record of a collection, in id order, as NDJSON or CSV that import reads back (a server may keep serving)',
    )
    .option('--format <format>', 'ndjson or csv (default: from --out’s name, else ndjson)')
    .option('--out <file>', 'write to FILE, which must not exist yet (default: standard output)')
    .option('-c, --config <file>', 'config file (default: ./berth.config.json)')
    .addHelpText(
      'after',
      '\nEvery field is written, hidden and private ones too (a password hash): keep the file as safe as a backup.',
    )
    .action(async (name: string, flags: { format?: string; out?: string; config?: string }) => {
      const collection = collectionNamed(app, name);
      const format = flags.out || flags.format ? formatOf(flags.out, flags.format) : 'ndjson';
      const target = flags.out ? resolve(flags.out) : undefined;
      if (target && existsSync(target)) {
        throw new CommandError(
          `${target} already exists, so nothing was written: choose another name or move it away`,
        );
      }
      const settings = settingsOf(app, flags.config);
      const storage: Storage = openProjectStorage(app, settings, { mustExist: true });
      const out: Writable = target ? createWriteStream(target, { flags: 'wx', mode: 0o600 }) : process.stdout;
      const started = Date.now();
      let count = 0;
      try {
        const writer = recordWriter(collection, format);
        await writeTo(out, writer.header);
        const repository = storage.repository(collection);
        let after: unknown[] | undefined;
        for (;;) {
          const { items } = await repository.list({
            orderBy: [{ field: 'id', direction: 'asc' }],
            limit: pageRecords,
            countLimit: 0,
            ...(after ? { after } : {}),
          });
          if (items.length === 0) break;
          await writeTo(out, items.map((item) => writer.line(item as Record<string, unknown>)).join(''));
          count += items.length;
          after = [items[items.length - 1]!.id];
          if (items.length < pageRecords) break;
        }
      } finally {
        await storage.close();
        if (target) await new Promise<void>((done) => out.end(() => done()));
      }
      process.stderr.write(
        `exported ${count.toLocaleString('en-US')} ${collection.name} record${count === 1 ? '' : 's'}${target ? ` to ${target}` : ''} in ${((Date.now() - started) / 1000).toFixed(1)} s (${perSecond(count, started)} records/s)\n`,
      );
    });
}
