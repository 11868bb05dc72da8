import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
// The flags this machine needs, shared with the benchmarks' Chromium (scripts/lib/berth-in-chromium.mjs).
import chromiumArgs from '../../../scripts/lib/chromium-args.json' with { type: 'json' };

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Debian's Chromium, headless, with the flags this machine needs, on a fresh temporary profile. Missing Chromium fails loudly. */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium is not installed at ${chromiumPath}: apt-get install -y chromium (or set CHROMIUM_PATH)`,
    );
  }
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: chromiumArgs,
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}
