// Berth serving the data bench's collections: its books, and loans of them,
// for `npm run bench -- data`.
import { booksModule, createApp, defineModule, runCli } from '../../dist/internal.js';
import { loans } from './data-collections.mjs';

await runCli(
  createApp({
    name: 'data-bench',
    modules: [booksModule, defineModule({ name: 'loans', collections: [loans] })],
  }),
);
