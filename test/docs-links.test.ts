import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  'bench/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as dashes. */
const anchor = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

describe('the documentation', () => {
  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target, fragment] of text.matchAll(/\]\(([^)#\s]*)(#[^)\s]+)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const file = target ? join(dirname(join(root, page)), target) : join(root, page);
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (!fragment || !file.endsWith('.md')) continue;
        const headings = [...readFileSync(file, 'utf8').matchAll(/^#+ (.+)$/gm)].map(([, heading]) =>
          anchor(heading!),
        );
        if (!headings.includes(fragment.slice(1))) {
          broken.push(`${page}: ${target}${fragment} (no such heading in ${relative(root, file)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
