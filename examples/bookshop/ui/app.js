// The bookshop's own page: lists authors and books from its API.
async function fill(id, path, describe) {
  const list = document.getElementById(id);
  try {
    const response = await fetch(path);
    const { items } = await response.json();
    list.replaceChildren(
      ...items.map((item) => {
        const entry = document.createElement('li');
        entry.textContent = describe(item);
        return entry;
      }),
    );
  } catch (error) {
    list.textContent = `Could not load ${path}: ${error.message}`;
  }
}

fill('authors', '/authors', (author) => `${author.name}${author.born ? ` (born ${author.born})` : ''}`);
fill('books', '/books?limit=100', (book) => `${book.title} — ${book.author}`);
