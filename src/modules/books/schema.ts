import { z } from 'zod';
import { defineCollection } from '../../storage/collection.js';

const title = z.string().trim().min(1, 'title must not be empty').max(300);
const author = z.string().trim().min(1, 'author must not be empty').max(200);
const year = z.number().int().min(-3000).max(2100).nullable();
const isbn = z
  .string()
  .regex(/^(?:\d[\d-]{8,15}[\dX])$/, 'isbn must be 10 or 13 digits, dashes allowed')
  .nullable();

export const BookInput = z.strictObject({
  title,
  author,
  year: year.optional(),
  isbn: isbn.optional(),
});
export type BookInput = z.infer<typeof BookInput>;

export const BookPatch = BookInput.partial().refine((patch) => Object.keys(patch).length > 0, {
  message: 'send at least one of title, author, year, isbn',
});

export const Book = z.object({
  id: z.string(),
  title: z.string(),
  author: z.string(),
  year: z.number().int().nullable(),
  isbn: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Book = z.infer<typeof Book>;

const sortable = ['title', 'author', 'year', 'createdAt', 'updatedAt'] as const;
const maxSortKeys = 3;
const sortKey = new RegExp(`^-?(?:${sortable.join('|')})$`);

export const BookQuery = z.strictObject({
  author: z.string().trim().min(1).max(200).optional(),
  q: z.string().trim().min(1).max(200).optional(),
  yearFrom: z.coerce.number().int().optional(),
  yearTo: z.coerce.number().int().optional(),
  sort: z
    .string()
    .refine((value) => value.split(',').every((key) => sortKey.test(key)), {
      message: `sort by ${sortable.join(', ')}, comma-separated, "-" for descending (e.g. "-year,title")`,
    })
    .refine((value) => value.split(',').length <= maxSortKeys, {
      message: `sort by at most ${maxSortKeys} fields`,
    })
    .refine(
      (value) => {
        const fields = value.split(',').map((key) => key.replace(/^-/, ''));
        return new Set(fields).size === fields.length;
      },
      { message: 'sort by each field once' },
    )
    .optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});
export type BookQuery = z.infer<typeof BookQuery>;

export const BookPage = z.object({
  items: z.array(Book),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next: z.string().nullable().describe('The link to the next page, or null on the last one'),
});

export const BookId = z.object({ id: z.string().min(1).max(100) });

export const booksCollection = defineCollection<BookInput>({
  name: 'books',
  fields: {
    title: { type: 'text', indexed: true },
    author: { type: 'text', indexed: true },
    year: { type: 'integer', required: false, indexed: true },
    isbn: { type: 'text', required: false, unique: true },
  },
  searchable: ['title', 'author'],
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
