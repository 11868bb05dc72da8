import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/processes.js';
import {
  expectOfflineAndPrivate,
  logInAndWait,
  openAdmin,
  serverApi,
  useChromium,
} from './helpers/admin-page.js';

const browser = useChromium();

type BackupList = { backups: Array<{ name: string; bytes: number }> };

describe('admin UI: backups on the overview', () => {
  it('lists none, makes one with Back up now, and downloads it with the admin token', async () => {
    const session = await openAdmin(await browser());
    const { page, server } = session;
    await logInAndWait(page);
    const backups = page.getByRole('region', { name: 'Backups' });
    await backups.getByText('No backups yet.').waitFor();
    await backups.getByText('No schedule (set BERTH_BACKUP_INTERVAL)', { exact: false }).waitFor();

    await backups.getByRole('button', { name: 'Back up now' }).click();
    await backups
      .getByRole('status')
      .getByText(/^Backed up: /)
      .waitFor();
    const { backups: made } = await serverApi<BackupList>(server, 'GET', '/admin/backups');
    expect(made).toHaveLength(1);
    const [backup] = made;
    expect(await backups.getByRole('status').textContent()).toMatch(
      new RegExp(`^Backed up: ${backup!.name} \\(\\d+ KiB\\)\\.$`),
    );
    await backups.getByRole('cell', { name: backup!.name, exact: true }).waitFor();

    const downloading = page.waitForEvent('download');
    await backups.getByRole('button', { name: `Download ${backup!.name}` }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe(backup!.name);
    const saved = join(tempDir(), 'saved.sqlite');
    await download.saveAs(saved);
    const bytes = readFileSync(saved);
    expect(bytes.length).toBe(backup!.bytes);
    expect(bytes.subarray(0, 15).toString('latin1')).toBe('SQLite format 3');
    expectOfflineAndPrivate(session);
  });

  it('a scheduled backup that failed is shown as an alert', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'data'), { recursive: true });
    writeFileSync(join(cwd, 'data', 'backups'), 'a file where the backups directory should be\n');
    const { page } = await openAdmin(await browser(), { cwd, env: { BERTH_BACKUP_INTERVAL: '1s' } });
    await new Promise((done) => setTimeout(done, 1500));
    await logInAndWait(page);
    const alert = page.getByRole('region', { name: 'Backups' }).getByRole('alert');
    await alert.getByText(/The scheduled backup of .* failed: EEXIST/).waitFor();
    await page.getByText('Every 1s, keeping the newest 7', { exact: false }).waitFor();
  });
});
