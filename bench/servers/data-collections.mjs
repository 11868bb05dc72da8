// The data bench's second collection: loans of books (a reference, an enum and a date).
import { books, defineCollection, field } from '../../dist/internal.js';

export const loans = defineCollection({
  name: 'loans',
  description: 'Who borrowed which book, and until when.',
  fields: {
    book: field.reference(books),
    reader: field.text({ max: 100 }),
    status: field.enum(['open', 'returned', 'lost'], { indexed: true }),
    due: field.date({ indexed: true }),
  },
  sort: '-due',
  sorts: ['status,-due'],
});
