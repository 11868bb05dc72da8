// Writes the reference table of every setting into docs/configuration.md, between the
// settings markers, from src/node/settings/setting-table.ts (built into dist/).
import { readFileSync, writeFileSync } from 'node:fs';
import { settingsReference } from '../dist/node/settings/setting-table.js';

const file = new URL('../docs/configuration.md', import.meta.url);
const readme = readFileSync(file, 'utf8');
const start = '<!-- settings:start -->';
const end = '<!-- settings:end -->';
const before = readme.slice(0, readme.indexOf(start) + start.length);
const after = readme.slice(readme.indexOf(end));
if (!readme.includes(start) || !readme.includes(end))
  throw new Error(`docs/configuration.md has no ${start} … ${end} block`);
writeFileSync(file, `${before}\n${settingsReference()}\n${after}`);
console.log('docs/configuration.md: settings table written');
