// The books queries every baseline answers, as Berth runs them: the page
// size inlined (one cached statement per size), the id last in the order,
// the total alongside. Same driver, same file.
import Database from '../../dist/storage/sqlite-driver.js';

const db = new Database(process.env.BENCH_DB, { readonly: true });
const columns = db
  .prepare('SELECT name FROM pragma_table_info(?)')
  .all('books')
  .map(({ name }) => `"${name}"`)
  .join(', ');
const pages = new Map();
const count = db.prepare('SELECT count(*) AS "total" FROM "books"');
const byId = db.prepare(`SELECT ${columns} FROM "books" WHERE "id" = ?`);

/** One page of books sorted by title, with the total, as `GET /books` answers it. */
export function listBooks(limit, offset) {
  const key = `${limit} ${offset}`;
  let statement = pages.get(key);
  if (!statement) {
    statement = db.prepare(
      `SELECT ${columns} FROM "books" ORDER BY "title" ASC, "id" ASC LIMIT ${limit}${offset ? ` OFFSET ${offset}` : ''}`,
    );
    pages.set(key, statement);
  }
  const items = statement.all();
  const { total } = count.get();
  return {
    items,
    total,
    limit,
    offset,
    next: offset + limit < total ? `/books?offset=${offset + limit}` : null,
  };
}

export const getBook = (id) => byId.get(id);
