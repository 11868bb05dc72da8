import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/processes.js';

const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
const importPattern = /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module reachable from `entry` by relative imports, with the bare specifiers each imports. */
function importGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (graph.has(file)) continue;
    const bare: string[] = [];
    for (const match of readFileSync(file, 'utf8').matchAll(importPattern)) {
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
    const graph = importGraph(join(repoRoot, 'src', 'core', 'index.ts'));
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

  it('the check notices a Node import', () => {
    const specifiers = [...'import { readFileSync } from "node:fs";'.matchAll(importPattern)].map(
      (m) => m[1],
    );
    expect(specifiers.filter((s) => builtins.has(s!))).toEqual(['node:fs']);
  });
});
