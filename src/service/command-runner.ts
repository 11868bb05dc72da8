import { execFile } from 'node:child_process';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a system command (systemctl, launchctl). Injectable, so tests can record the sequence. */
export type CommandRunner = (command: string, args: string[]) => Promise<CommandResult>;

/**
 * The real runner: never rejects; a missing command is code 127, one that
 * ran past 60 s is code 124, as in a shell.
 *
 * @example
 * const { code, stdout } = await runCommand('systemctl', ['--user', 'is-system-running'])
 */
export const runCommand: CommandRunner = (command, args) =>
  new Promise((resolve) => {
    execFile(command, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      const code = !error ? 0 : typeof error.code === 'number' ? error.code : error.killed ? 124 : 127;
      const why = code === 124 ? `${command} did not answer within 60 s` : error?.message;
      resolve({
        code,
        stdout: String(stdout),
        stderr: String(stderr || (code === 127 || code === 124 ? why : '')),
      });
    });
  });
