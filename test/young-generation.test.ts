import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/processes.js';

// In a process of its own (V8's flags are the process's): allocation with many objects alive, as
// requests in flight make, turning the event loop as a server does. Prints the young generation's
// size before and after, in MiB.
const script = `
import v8 from 'node:v8';
import { limitYoungGeneration } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'node', 'young-generation.js')).href)};
const size = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 2 ** 20;
const before = size();
const limited = limitYoungGeneration(Number(process.argv[1]));
const live = new Array(30000);
for (let i = 0; i < 2e6; i++) {
  live[i % live.length] = { i, text: 'item ' + i, list: [i, i + 1] };
  if (i % 2000 === 0) await new Promise((turn) => setImmediate(turn));
}
console.log(JSON.stringify({ before, limited, after: size() }));
`;

const run = (limit: number, nodeOptions: string[] = []) => {
  const child = spawnSync(
    process.execPath,
    [...nodeOptions, '--input-type=module', '-e', script, String(limit)],
    {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    },
  );
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout) as { before: number; limited: boolean; after: number };
};

describe('the young generation limit', () => {
  it('V8 alone grows the young generation under load; with a limit it stops there', () => {
    const free = run(0);
    expect(free.limited).toBe(false);
    expect(free.after).toBeGreaterThan(8);
    const limited = run(4);
    expect(limited.limited).toBe(true);
    expect(limited.before).toBeLessThan(4);
    expect(limited.after).toBe(4);
  });

  it('a process started with its own sizing keeps it', () => {
    const own = run(4, ['--max-semi-space-size=4']);
    expect(own.limited).toBe(false);
    expect(own.after).toBe(8);
  });
});
