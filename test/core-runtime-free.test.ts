import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/processes.js';

const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
const importPattern = /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/**
 * Every module reachable from `entry` by relative imports, with the bare
 * specifiers each imports; with `runtimeOnly`, by those that remain at run
 * time (not `import type`).
 */
function importGraph(entry: string, runtimeOnly = false): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (graph.has(file)) continue;
    const bare: string[] = [];
    const text = readFileSync(file, 'utf8');
    // Comments (an @example's imports) are no imports.
    const code = runtimeOnly ? text.replace(/\/\*[\s\S]*?\*\//g, '') : text;
    for (const match of code.matchAll(importPattern)) {
      if (runtimeOnly && /^(?:import|export)\s+type\s/.test(match[0])) continue;
      const specifier = match[1] ?? match[2]!;
      if (specifier.startsWith('.')) queue.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else bare.push(specifier);
    }
    graph.set(file, bare);
  }
  return graph;
}

describe('src/core is runtime-free', () => {
  it('nothing reachable from src/core imports a Node built-in or touches process', () => {
    const graph = importGraph(join(repoRoot, 'src', 'core', 'internal.ts'));
    expect(graph.size).toBeGreaterThan(5);
    const offenders: string[] = [];
    for (const [file, specifiers] of graph) {
      for (const specifier of specifiers)
        if (builtins.has(specifier)) offenders.push(`${file}: ${specifier}`);
      const text = readFileSync(file, 'utf8');
      if (/\bprocess\.|\bBuffer\.|\bwindow\./.test(text))
        offenders.push(`${file}: uses process, Buffer or window`);
    }
    expect(offenders).toEqual([]);
  });

  it('nothing reachable from src/client (berth/client) imports a Node built-in or touches process', () => {
    const graph = importGraph(join(repoRoot, 'src', 'client', 'index.ts'), true);
    expect(graph.size).toBeGreaterThan(5);
    const offenders: string[] = [];
    for (const [file, specifiers] of graph) {
      // Only relative imports, and core's only as types: berth/client brings no package (the socket is the caller's).
      if (file.includes(`${join('src', 'core')}`)) offenders.push(`${file}: core's code, not its types`);
      for (const specifier of specifiers) offenders.push(`${file}: ${specifier}`);
      if (/\bprocess\.|\bBuffer\.|\bwindow\.|\bdocument\./.test(readFileSync(file, 'utf8')))
        offenders.push(`${file}: uses process, Buffer, window or document`);
    }
    expect(offenders).toEqual([]);
  });

  it('the check notices a Node import', () => {
    const specifiers = [...'import { readFileSync } from "node:fs";'.matchAll(importPattern)].map(
      (m) => m[1],
    );
    expect(specifiers.filter((s) => builtins.has(s!))).toEqual(['node:fs']);
  });
});

describe('the layers point one way (npm run lint)', () => {
  const lint = async (filePath: string, code: string) => {
    const eslint = new ESLint({ cwd: repoRoot });
    const [result] = await eslint.lintText(code, { filePath: join(repoRoot, filePath) });
    return result!.messages
      .filter((message) => message.ruleId?.endsWith('no-restricted-imports'))
      .map((message) => message.message);
  };

  it('refuses an import against the direction, naming what the folder may import', async () => {
    expect(
      await lint(
        'src/core/example.ts',
        "import { startServer } from '../node/start.js';\nexport { startServer };\n",
      ),
    ).toEqual([
      "'../node/start.js' import is restricted from being used by a pattern. src/core may import only itself: the layers point one way (see eslint.config.js)",
    ]);
    expect(
      await lint(
        'src/core/example.ts',
        "import { readFileSync } from 'node:fs';\nexport { readFileSync };\n",
      ),
    ).toHaveLength(1);
    expect(
      await lint('src/storage/example.ts', "import { boot } from '../node/boot.js';\nexport { boot };\n"),
    ).toHaveLength(1);
    expect(
      await lint(
        'src/modules/x/example.ts',
        "import { openSqliteStorage } from '../../storage/sqlite.js';\nexport { openSqliteStorage };\n",
      ),
    ).toHaveLength(1);
    expect(
      await lint(
        'src/service/example.ts',
        "import { CommandError } from '../cli/command-error.js';\nexport { CommandError };\n",
      ),
    ).toHaveLength(1);
  });

  it('src/client takes only types of src/core, and nothing of the other folders or Node', async () => {
    expect(
      await lint(
        'src/client/example.ts',
        "import { EventBus } from '../core/events.js';\nexport { EventBus };\n",
      ),
    ).toEqual([
      "'../core/events.js' import is restricted from being used by a pattern. src/client imports only types of src/core (import type): it ships without Berth's runtime",
    ]);
    expect(
      await lint(
        'src/client/example.ts',
        "import type { RecordOf } from '../core/collection.js';\nexport type { RecordOf };\n",
      ),
    ).toEqual([]);
    expect(
      await lint(
        'src/client/example.ts',
        "import { createBrowserServer } from '../browser/browser-server.js';\nexport { createBrowserServer };\n",
      ),
    ).toHaveLength(1);
    expect(
      await lint('src/client/example.ts', "import { connect } from 'node:net';\nexport { connect };\n"),
    ).toHaveLength(1);
  });

  it('lets an import with the direction pass', async () => {
    expect(
      await lint(
        'src/node/example.ts',
        "import { createApp } from '../core/index.js';\nexport { createApp };\n",
      ),
    ).toEqual([]);
    expect(
      await lint(
        'src/cli/example.ts',
        "import { startServer } from '../node/start.js';\nexport { startServer };\n",
      ),
    ).toEqual([]);
  });
});
