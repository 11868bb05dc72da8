import type { Command } from 'commander';
import { scaffoldProject } from './scaffold.js';

/** `berth new <dir>`: scaffolds a project with its own binary and one module. */
export function addNewCommand(program: Command): void {
  program
    .command('new')
    .description('create a project built on Berth, with its own binary and a first module')
    .argument('<dir>', 'directory to create (its name names the project)')
    .action((dir: string) => {
      const project = scaffoldProject(dir);
      process.stdout.write(
        `created ${project.name} in ${project.dir}:\n${project.files.map((file) => `  ${file}`).join('\n')}\n\nnext:\n  cd ${dir}\n  npm install\n  npm start\n`,
      );
    });
}
