import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CommandError } from './command-error.js';

/** The directory Berth is installed in, which new projects depend on by path. */
export const berthRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const files = (name: string, berthPath: string): Record<string, string> => ({
  'package.json': `${JSON.stringify(
    {
      name,
      version: '0.1.0',
      private: true,
      type: 'module',
      bin: { [name]: `bin/${name}` },
      scripts: { start: `node bin/${name} start` },
      engines: { node: '>=20.19' },
      dependencies: { berth: `file:${berthPath}` },
    },
    null,
    2,
  )}\n`,
  [`bin/${name}`]: `#!/usr/bin/env node
// ${name}'s command-line tool: \`${name} start\` and Berth's other commands.
import { createApp, runCli } from 'berth';
import { helloModule } from '../modules/hello.js';

await runCli(createApp({ name: '${name}', modules: [helloModule] }));
`,
  'modules/hello.js': `import { defineModule, defineRoute, z } from 'berth';

/** A first module: GET /hello/:name answers with a greeting. */
export const helloModule = defineModule({
  name: 'hello',
  routes: [
    defineRoute({
      method: 'GET',
      path: '/hello/:name',
      summary: 'Greets someone',
      params: z.object({ name: z.string().min(1).max(100) }),
      handler: ({ params }) => ({ greeting: \`Hello, \${params.name}!\` }),
    }),
  ],
});
`,
  '.gitignore': 'node_modules/\ndata/\n.env\n',
  'README.md': `# ${name}

An HTTP back end built on [Berth](${berthPath}).

\`\`\`sh
npm install
npm start            # the same as ./bin/${name} start; serves on port 4500
curl localhost:4500/hello/world
\`\`\`

Add routes in \`modules/\` with \`defineModule\` and \`defineRoute\`, and list the
modules in \`bin/${name}\`. \`./bin/${name} --help\` lists the commands.
`,
});

/** Writes a new project that runs after `npm install` in it. Refuses a non-empty directory. */
export function scaffoldProject(target: string): { dir: string; name: string; files: string[] } {
  const dir = resolve(target);
  const name = basename(dir).toLowerCase();
  if (!/^[a-z][a-z0-9-]{0,213}$/.test(name)) {
    throw new CommandError(
      `"${basename(dir)}" cannot name a project: use lower-case letters, digits and dashes, starting with a letter`,
    );
  }
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new CommandError(`${dir} is not empty: choose a new directory, nothing was written`);
  }
  const written: string[] = [];
  for (const [path, content] of Object.entries(files(name, berthRoot))) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    written.push(path);
  }
  chmodSync(join(dir, 'bin', name), 0o755);
  return { dir, name, files: written };
}
