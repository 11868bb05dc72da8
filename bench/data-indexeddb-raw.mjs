// The hand-written side of bench/data-indexeddb.mjs: for each shape, the
// best query written against IndexedDB's own API on the same database (the
// indexes and text store Berth keeps there), answering what Berth answers:
// the page's records (20), the total up to 1,000 and whether it is exact. Its
// source is sent into the page (`handWrittenQueries.toString()`), so it
// imports nothing.
export function handWrittenQueries() {
  const cap = 1000;
  const page = 20;
  let opened;
  const open = () =>
    (opened ??= new Promise((done, fail) => {
      const request = indexedDB.open('bench-users');
      request.onsuccess = () => {
        const db = request.result;
        db.onversionchange = () => {
          db.close();
          opened = undefined;
        };
        done(db);
      };
      request.onerror = () => fail(request.error);
    }));
  const settled = (request) =>
    new Promise((done, fail) => {
      request.onsuccess = () => done(request.result);
      request.onerror = () => fail(request.error);
    });
  const totalOf = (count) => (count > cap ? { total: cap, exact: false } : { total: count, exact: true });
  const stores = async (mode = 'readonly') => (await open()).transaction(['users', 'users~q'], mode);
  const users = async () => (await stores()).objectStore('users');
  const only = (value) => IDBKeyRange.bound([value], [value, []]);
  /** Records of an index in order from a range, checked one by one, until `want` pass. */
  const walk = async (source, range, test, want, direction = 'next') => {
    const found = [];
    let batch = 256;
    for (;;) {
      const records = (await settled(source.getAllRecords({ query: range, count: batch, direction }))).map(
        (each) => ({ key: each.key, value: each.value }),
      );
      for (const { value } of records) if (test(value) && found.push(value) >= want) return found;
      if (records.length < batch) return found;
      const last = records.at(-1).key;
      range =
        direction === 'next'
          ? range?.upper !== undefined
            ? IDBKeyRange.bound(last, range.upper, true, range.upperOpen)
            : IDBKeyRange.lowerBound(last, true)
          : IDBKeyRange.upperBound(last, true);
      batch = Math.min(batch * 4, 4096);
    }
  };
  const byCreated = (a, b) =>
    a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1;
  const trigrams = (text) => {
    const points = [...text];
    const found = new Set();
    for (let i = 0; i + 3 <= points.length; i++) found.add(points[i] + points[i + 1] + points[i + 2]);
    return [...found];
  };
  /** Ids holding every trigram of the text: the rarest three lists, intersected. */
  const candidates = async (text) => {
    const t = await stores();
    const index = t.objectStore('users~q').index('t');
    const grams = trigrams(text);
    const counts = await Promise.all(grams.map((g) => settled(index.count(IDBKeyRange.only(g)))));
    const rarest = grams.map((g, i) => [g, counts[i]]).sort((a, b) => a[1] - b[1]);
    if (rarest[0][1] === 0) return [];
    const lists = await Promise.all(
      rarest.slice(0, 3).map(([g]) => settled(index.getAllKeys(IDBKeyRange.only(g)))),
    );
    const [first, ...others] = lists;
    const sets = others.map((list) => new Set(list));
    return first.filter((id) => sets.every((set) => set.has(id)));
  };
  const contains = (value, text) => value !== null && String(value).toLowerCase().includes(text);
  /** The page as Berth answers it: the records (without their keys, nor the hidden password hash) and the total. */
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- taken out of what is shown
  const shown = ({ _k, passwordHash, ...user }) => user;
  const answer = (rows, count) => ({ items: rows.slice(0, page).map(shown), ...totalOf(count) });

  return {
    async defaultList() {
      const store = await users();
      const [rows, keys] = await Promise.all([
        settled(store.index('[createdAt+id]').getAll(null, page)),
        settled(store.getAllKeys(null, cap + 1)),
      ]);
      return answer(rows, keys.length);
    },
    async adminsByName() {
      const store = await users();
      const keys = await settled(store.index('[_k.role+id]').getAllKeys(only('admin'), 2001));
      const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1);
      // Few admins: all of them, sorted; many: along the name index until the page is full.
      const rows =
        keys.length <= 2000
          ? (await settled(store.index('[_k.role+id]').getAll(only('admin')))).sort(byName)
          : await walk(store.index('[_k.name+id]'), null, (user) => user.role === 'admin', page);
      return answer(rows, keys.length);
    },
    async twoFilters() {
      const store = await users();
      const admins = await settled(store.index('[_k.role+id]').getAll(only('admin')));
      const rows = admins.filter((user) => user.disabled === true).sort(byCreated);
      return answer(rows, rows.length);
    },
    async range(from, to) {
      const store = await users();
      const range = IDBKeyRange.bound([from], [to], false, true);
      const index = store.index('[createdAt+id]');
      const [rows, keys] = await Promise.all([
        settled(index.getAll(range, page)),
        settled(index.getAllKeys(range, cap + 1)),
      ]);
      return answer(rows, keys.length);
    },
    async search(text) {
      const ids = await candidates(text);
      if (!ids.length) return answer([], 0);
      const store = await users();
      const matches = (user) => contains(user.name, text) || contains(user.email, text);
      if (ids.length <= 2000) {
        const rows = (await Promise.all(ids.map((id) => settled(store.get(id)))))
          .filter(matches)
          .sort(byCreated);
        return answer(rows, rows.length);
      }
      // Many: the page from the order's index, the total from the candidates until past the cap.
      const rows = await walk(store.index('[createdAt+id]'), null, matches, page);
      let count = 0;
      for (let i = 0; i < ids.length && count <= cap; i += 500) {
        const records = await Promise.all(ids.slice(i, i + 500).map((id) => settled(store.get(id))));
        count += records.filter(matches).length;
      }
      return answer(rows, count);
    },
    async nameContains(text) {
      const ids = await candidates(text);
      const store = await users();
      const rows = (await Promise.all(ids.map((id) => settled(store.get(id)))))
        .filter((user) => contains(user.name, text))
        .sort(byCreated);
      return answer(rows, rows.length);
    },
    async roleThenName() {
      // admin before member: the admins sorted by name, then members along the name index.
      const store = await users();
      const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1);
      const [admins, keys] = await Promise.all([
        settled(store.index('[_k.role+id]').getAll(only('admin'))),
        settled(store.getAllKeys(null, cap + 1)),
      ]);
      let rows = admins.sort(byName).slice(0, page);
      if (rows.length < page)
        rows = rows.concat(
          await walk(store.index('[_k.name+id]'), null, (user) => user.role === 'member', page - rows.length),
        );
      return answer(rows, keys.length);
    },
    async after(createdAt, id) {
      const store = await users();
      const [rows, keys] = await Promise.all([
        settled(store.index('[createdAt+id]').getAll(IDBKeyRange.lowerBound([createdAt, id], true), page)),
        settled(store.getAllKeys(null, cap + 1)),
      ]);
      return answer(rows, keys.length);
    },
    async byId(id) {
      const user = await settled((await users()).get(id));
      return { item: shown(user) };
    },
    /** What a create (and an update) writes: the record with its keys, and its text entry, in one transaction. */
    async createAndUpdate(n, update) {
      const now = new Date().toISOString();
      const user = {
        id: `hand-${n}`,
        name: `Writer ${n}`,
        email: `writer-hand-${n}@example.org`,
        role: 'member',
        disabled: false,
        passwordHash: null,
        createdAt: now,
        updatedAt: now,
      };
      const put = async (row) => {
        const t = await stores('readwrite');
        t.objectStore('users').put({ ...row, _k: { name: row.name, role: row.role } });
        t.objectStore('users~q').put({
          id: row.id,
          t: [...new Set([...trigrams(row.name.toLowerCase()), ...trigrams(row.email)])],
        });
        await new Promise((done, fail) => {
          t.oncomplete = done;
          t.onerror = () => fail(t.error);
        });
      };
      await put(user);
      if (update) await put({ ...user, name: `Written ${n}`, updatedAt: new Date().toISOString() });
      return 201;
    },
  };
}
