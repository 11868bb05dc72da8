import { describe, expect, it } from 'vitest';
import { expectOfflineAndPrivate, logInAndWait, openAdmin, useChromium } from './helpers/admin-page.js';

const browser = useChromium();

describe('admin UI: the load of the last minutes on the overview', () => {
  it('draws requests per second, error rate and p95 from the server’s metrics, with nothing fetched elsewhere', async () => {
    const session = await openAdmin(await browser());
    const { page, server } = session;
    await logInAndWait(page);
    const load = page.getByRole('region', { name: 'Load' });
    await load.getByRole('img', { name: /^Requests: / }).waitFor();

    // Traffic for the next point: 200 answers and some 404s.
    const started = Date.now();
    while (Date.now() - started < 6000) {
      await Promise.all([
        ...Array.from({ length: 20 }, () => fetch(`${server.url}/books`).then((response) => response.text())),
        fetch(`${server.url}/books/nobody`).then((response) => response.text()),
      ]);
    }
    const requests = load.getByRole('img', { name: /^Requests: now / });
    await requests.waitFor({ timeout: 15_000 });
    const perSecond = Number(/now ([\d.]+)\/s/.exec((await requests.getAttribute('aria-label'))!)![1]);
    expect(perSecond).toBeGreaterThan(10);
    expect(await load.getByRole('img', { name: /^Errors \(5xx\): now 0\.0 %/ }).count()).toBe(1);
    const p95 = await load.getByRole('img', { name: /^p95 latency: now / }).getAttribute('aria-label');
    expect(Number(/now ([\d.]+) ms/.exec(p95!)![1])).toBeGreaterThan(0);
    expect(await load.locator('svg path.line').count()).toBe(3);
    // The next point draws a line from the first.
    await expect
      .poll(() => load.locator('svg path.line').first().getAttribute('d'), { timeout: 12_000 })
      .toMatch(/^M[\d.]+,[\d.]+L[\d.]+,[\d.]+/);
    expectOfflineAndPrivate(session);
  });
});
