import { execFile } from 'node:child_process';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a system command (systemctl, launchctl). Injectable, so tests can record the sequence. */
export type CommandRunner = (command: string, args: string[]) => Promise<CommandResult>;

export const runCommand: CommandRunner = (command, args) =>
  new Promise((resolve) => {
    execFile(command, args, { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 127) : 0;
      resolve({
        code,
        stdout: String(stdout),
        stderr: String(stderr || (error && code === 127 ? error.message : '')),
      });
    });
  });
