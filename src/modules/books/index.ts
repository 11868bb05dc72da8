import { defineCollection, defineModule, field } from '../../core/internal.js';

/** A catalogue of books, declared once: its fields are its validation, its table and its API. */
export const books = defineCollection({
  name: 'books',
  description: 'A catalogue of books.',
  fields: {
    title: field.text({ max: 300, searchable: true, indexed: true }),
    author: field.text({ max: 200, searchable: true, indexed: true }),
    year: field.integer({ min: -3000, max: 2100, required: false, indexed: true }),
    isbn: field.text({
      pattern: /^(?:\d[\d-]{8,15}[\dX])$/,
      patternMessage: 'isbn must be 10 or 13 digits, dashes allowed',
      required: false,
      unique: true,
    }),
  },
  sort: 'title',
  // Newest first, then by title: kept in an index of its own.
  sorts: ['-year,title'],
  // The query parameters books have always had.
  aliases: { author: 'author[contains]', yearFrom: 'year[gte]', yearTo: 'year[lte]' },
  seed: () => [
    { title: 'The Left Hand of Darkness', author: 'Ursula K. Le Guin', year: 1969, isbn: '978-0441478125' },
    { title: 'A Wizard of Earthsea', author: 'Ursula K. Le Guin', year: 1968, isbn: '978-0547773742' },
    { title: 'Dune', author: 'Frank Herbert', year: 1965, isbn: '978-0441172719' },
    { title: 'Neuromancer', author: 'William Gibson', year: 1984, isbn: '978-0441569595' },
    { title: 'The Hobbit', author: 'J. R. R. Tolkien', year: 1937, isbn: '978-0547928227' },
    { title: 'Kindred', author: 'Octavia E. Butler', year: 1979, isbn: '978-0807083697' },
    { title: 'Pride and Prejudice', author: 'Jane Austen', year: 1813, isbn: null },
  ],
});

/** The books module: the books resource (anyone reads; admins write). */
export const booksModule = defineModule({
  name: 'books',
  description: 'A catalogue of books: filter, search, sort and page through it; admins edit it.',
  collections: [books],
});
