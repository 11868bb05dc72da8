import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import Database, { sqliteDriverPath } from '../src/storage/sqlite-driver.js';

const nodeMajor = Number(process.versions.node.split('.')[0]);

describe('the SQLite driver', () => {
  it('is better-sqlite3 13 on Node.js 22 and later and 12 on Node.js 20', () => {
    const { version } = JSON.parse(
      execFileSync(
        process.execPath,
        [
          '-p',
          `JSON.stringify(require(${JSON.stringify(sqliteDriverPath.replace(/lib[/\\]index\.js$/, 'package.json'))}))`,
        ],
        {
          encoding: 'utf8',
        },
      ),
    ) as { version: string };
    expect(Number(version.split('.')[0])).toBe(nodeMajor >= 22 ? 13 : 12);
    const db = new Database(':memory:');
    expect(db.prepare('select 1 + 1 as two').get()).toEqual({ two: 2 });
    db.close();
  });

  it('survives statements and connections collected as garbage, and the exit after them', () => {
    // Users of better-sqlite3 12 compiled for Node.js 24.19 or later report aborts (exit 134) when a statement or a
    // connection is freed by the collector or at exit; a driver that fails so fails this test.
    const driver = fileURLToPath(new URL('../dist/storage/sqlite-driver.js', import.meta.url));
    const program = `
      const { default: Database } = await import(${JSON.stringify(driver)});
      for (let round = 0; round < 20; round++) {
        const db = new Database(':memory:');
        for (let i = 0; i < 500; i++) db.prepare('select ' + i).get();
        if (round % 2) db.close();
        globalThis.gc();
      }
      globalThis.gc();
      console.log('done');
    `;
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', program], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('done');
  });
});
