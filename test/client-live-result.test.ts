import { describe, expect, it } from 'vitest';
import { createLiveResult } from '../src/client/live-result.js';
import { compareBy, resultShape } from '../src/client/query-order.js';
import { byKeys, orderOf } from '../src/core/internal.js';
import { sortKeys } from '../src/core/list-query.js';

type Task = { id: string; title: string; due: string | null };
const task = (id: string, due: string | null, title = `task ${id}`): Task => ({ id, title, due });
const ids = (items: readonly { id: string }[]) => items.map(({ id }) => id);

describe('a live query’s order and size, read from its query string', () => {
  it('takes the sort keys, then id in the first key’s direction, and the limit', () => {
    expect(resultShape('status=open&sort=-due,title&limit=5')).toEqual({
      order: [
        { field: 'due', direction: 'desc' },
        { field: 'title', direction: 'asc' },
        { field: 'id', direction: 'desc' },
      ],
      limit: 5,
    });
    expect(resultShape('?sort=title').order).toEqual([
      { field: 'title', direction: 'asc' },
      { field: 'id', direction: 'asc' },
    ]);
    expect(resultShape('sort=-id').order).toEqual([{ field: 'id', direction: 'desc' }]);
  });

  it('without sort or limit: the collection’s order (-createdAt unless told) and 20, as GET answers', () => {
    expect(resultShape('status=open')).toEqual({
      order: [
        { field: 'createdAt', direction: 'desc' },
        { field: 'id', direction: 'desc' },
      ],
      limit: 20,
    });
    expect(resultShape('', 'title').order[0]).toEqual({ field: 'title', direction: 'asc' });
  });
});

describe('the client orders as the server does', () => {
  // berth/client takes no code of core (it ships without it): these keep its copy of the order in step.
  it('the same keys as orderOf, and the same order of records as byKeys', () => {
    const rows = [
      { id: 'a', due: 3, title: 'x' },
      { id: 'b', due: null, title: 'y' },
      { id: 'c', due: 3, title: 'w' },
      { id: 'd', due: -1, title: null },
      { id: 'e', due: 3, title: 'x' },
      { id: 'f', due: undefined, title: 'z' },
    ];
    for (const sort of ['-due', 'due', 'due,-title', '-title,due', 'title', '-id', 'id,due']) {
      const { order } = resultShape(`sort=${sort}`);
      expect(order).toEqual(orderOf({ orderBy: sortKeys(sort) }));
      expect([...rows].sort(compareBy(order))).toEqual([...rows].sort(byKeys(order)));
    }
  });
});

describe('a live query’s result', () => {
  const open = () => {
    const result = createLiveResult<Task>('status=open&sort=-due&limit=3');
    result.replace([task('a', '2025-01-01'), task('b', '2025-03-01'), task('c', '2025-02-01')], 10);
    return result;
  };

  it('takes the snapshot in the query’s order, cut to its limit, at its seq', () => {
    const result = createLiveResult<Task>('sort=-due&limit=2');
    result.replace([task('a', '2025-01-01'), task('b', '2025-03-01'), task('c', '2025-02-01')], 7);
    expect(ids(result.items)).toEqual(['b', 'c']);
    expect(result.seq).toBe(7);
  });

  it('keeps the order and size the snapshot says the server keeps (the ack’s sort and limit), over the query string’s', () => {
    // A query whose limit and order the collection gives (an alias of limit, its own default order).
    const result = createLiveResult<Task>('n=2');
    result.replace([task('a', '2025-01-01'), task('c', '2025-02-01')], 7, { sort: 'due,id', limit: 2 });
    expect(ids(result.items)).toEqual(['a', 'c']);
    expect(result.apply('enter', task('d', '2024-12-01'), 8)).toBe(true);
    expect(ids(result.items)).toEqual(['d', 'a']);
    // A snapshot that says nothing of them (an older server) keeps what the last one said.
    result.replace([task('b', '2025-03-01'), task('c', '2025-02-01'), task('e', '2025-04-01')], 9);
    expect(ids(result.items)).toEqual(['c', 'b']);
  });

  it('an enter that belongs before the end pushes the last record out', () => {
    const result = open();
    expect(ids(result.items)).toEqual(['b', 'c', 'a']);
    expect(result.apply('enter', task('d', '2025-02-15'), 11)).toBe(true);
    expect(ids(result.items)).toEqual(['b', 'd', 'c']);
    expect(result.seq).toBe(11);
    // The server's leave of the record pushed out changes nothing more.
    expect(result.apply('leave', { id: 'a' }, 12)).toBe(false);
    expect(ids(result.items)).toEqual(['b', 'd', 'c']);
  });

  it('a change moves its record to where the order puts it', () => {
    const result = open();
    result.apply('change', task('a', '2025-04-01', 'now first'), 11);
    expect(ids(result.items)).toEqual(['a', 'b', 'c']);
    expect(result.items[0]).toEqual(task('a', '2025-04-01', 'now first'));
    result.apply('change', task('b', '2024-12-01'), 12);
    expect(ids(result.items)).toEqual(['a', 'c', 'b']);
  });

  it('a leave takes its record away; the enter that pulls another in at the limit fills the place', () => {
    const result = open();
    expect(result.apply('leave', { id: 'c' }, 11)).toBe(true);
    expect(ids(result.items)).toEqual(['b', 'a']);
    result.apply('enter', task('e', '2024-01-01'), 12);
    expect(ids(result.items)).toEqual(['b', 'a', 'e']);
  });

  it('drops an event at or before the snapshot’s seq, or before the last event’s', () => {
    const result = open();
    const before = result.items;
    expect(result.apply('enter', task('z', '2030-01-01'), 10)).toBe(false);
    expect(result.apply('leave', { id: 'b' }, 9)).toBe(false);
    expect(result.items).toBe(before);
    expect(result.seq).toBe(10);
    result.apply('leave', { id: 'b' }, 12);
    expect(result.apply('enter', task('b', '2025-03-01'), 11)).toBe(false);
    expect(ids(result.items)).toEqual(['c', 'a']);
  });

  it('applies every event of one change: they share its seq', () => {
    const result = open();
    // A change that moves a record to the end of a full result: the server reads the result again, and the
    // record it passed enters while the moved one leaves, all at the change's seq.
    result.apply('change', task('b', '2024-06-01'), 11);
    result.apply('leave', { id: 'b' }, 11);
    result.apply('enter', task('f', '2024-12-01'), 11);
    expect(ids(result.items)).toEqual(['c', 'a', 'f']);
    expect(result.seq).toBe(11);
  });

  it('gives a new array at each change (the old one stays as it was)', () => {
    const result = open();
    const before = result.items;
    result.apply('leave', { id: 'b' }, 11);
    expect(ids(before)).toEqual(['b', 'c', 'a']);
    expect(result.items).not.toBe(before);
  });

  it('orders equal keys by id in the first key’s direction, and nothing (null) first ascending, last descending', () => {
    const descending = createLiveResult<Task>('sort=-due');
    descending.replace([task('a', '2025-01-01'), task('b', null), task('c', '2025-01-01')], 1);
    expect(ids(descending.items)).toEqual(['c', 'a', 'b']);
    const ascending = createLiveResult<Task>('sort=due,title');
    ascending.replace([task('a', '2025-01-01', 'same'), task('b', null), task('c', '2025-01-01', 'same')], 1);
    expect(ids(ascending.items)).toEqual(['b', 'a', 'c']);
  });

  it('takes a snapshot with the server’s sort in the order it came in, and keeps it where the server says it stands', () => {
    // The server's order is the database's: a text past U+FFFF sorts after U+FF5E there (by code point), before
    // it in JavaScript (by UTF-16 unit).
    const result = createLiveResult<Task>('sort=title');
    const listed = [task('a', null, '\uFF5E'), task('b', null, '\u{1F600}')];
    result.replace(listed, 5, { sort: 'title,id', limit: 20 });
    expect(ids(result.items)).toEqual(['a', 'b']);
    result.keep(6);
    expect(ids(result.items)).toEqual(['a', 'b']);
    expect(result.seq).toBe(6);
    // From a server that does not say its order: sorted by the query string's.
    const older = createLiveResult<Task>('sort=title');
    older.replace(listed, 5);
    expect(ids(older.items)).toEqual(['b', 'a']);
  });

  it('puts an enter or a change where the server says (after the record it names, first for null), not where its values would', () => {
    const result = open(); // b, c, a
    expect(result.apply('enter', task('d', '1999-01-01'), 11, 'b')).toBe(true);
    expect(ids(result.items)).toEqual(['b', 'd', 'c']);
    result.apply('change', task('c', '1999-01-01'), 12, null);
    expect(ids(result.items)).toEqual(['c', 'b', 'd']);
    // A place it cannot use (a record it does not hold, not an id at all): where its values put it.
    result.apply('change', task('b', '1990-01-01'), 13, 'gone');
    expect(ids(result.items)).toEqual(['c', 'd', 'b']);
    result.apply('change', task('b', '2030-01-01'), 14, 7 as unknown as string);
    expect(ids(result.items)).toEqual(['b', 'c', 'd']);
  });

  it('an enter of a record it holds already (or a change of one it lacks) leaves one copy, in place', () => {
    const result = open();
    result.apply('enter', task('c', '2025-02-02'), 11);
    result.apply('change', task('x', '2000-01-01'), 12);
    expect(ids(result.items)).toEqual(['b', 'c', 'a']);
  });
});
