import type { Command } from 'commander';

/** `berth new <dir> [--ts]`: scaffolds a project with its own binary, a first module and a test. */
export function addNewCommand(program: Command): void {
  program
    .command('new')
    .description('create a project built on Berth, with its own binary, a first module and a test')
    .argument('<dir>', 'directory to create (its name names the project)')
    .option('--ts', 'TypeScript (with a tsconfig) instead of JavaScript')
    .action(async (dir: string, flags: { ts?: boolean }) => {
      // Loaded when `new` runs: the templates are no part of a start.
      const { scaffoldProject } = await import('./scaffold.js');
      const project = scaffoldProject(dir, { typescript: flags.ts === true });
      process.stdout.write(
        `created ${project.name} (${flags.ts ? 'TypeScript' : 'JavaScript'}) in ${project.dir}:\n${project.files.map((file) => `  ${file}`).join('\n')}\n\nnext:\n  cd ${dir}\n  npm install\n  npm start     # then sign up and log in: README.md shows how\n  npm test\n`,
      );
    });
}
