// Shared by the screenshot scripts and the browser benchmark: a `bin/berth`
// in a temporary directory, and Debian's Chromium with this machine's flags.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import chromiumArgs from './chromium-args.json' with { type: 'json' };

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** Starts `bin/berth start` on a free port in a temporary directory; resolves with its URL and a stop(). */
export async function startBerth(env = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-script-'));
  const server = spawn(process.execPath, [join(root, 'bin', 'berth'), 'start'], {
    cwd,
    env: { ...process.env, PORT: '0', BERTH_MODE: 'release', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((done, fail) => {
    let out = '';
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/[^ "]+)/.exec(out);
      if (match) done(match[1]);
    });
    server.once('exit', (code) => fail(new Error(`berth exited with ${code}`)));
  });
  return {
    url,
    stop() {
      server.kill('SIGTERM');
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

/** Debian's Chromium, headless, with nothing that reaches for the network on its own. */
export const chromiumOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  // The same flags as the browser tests (test/browser/helpers/chromium.ts), from one list.
  args: chromiumArgs,
};

export function launchChromium() {
  return chromium.launch(chromiumOptions);
}
