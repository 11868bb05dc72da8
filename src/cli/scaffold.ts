import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { berthRoot } from '../node/runtime/berth-package.js';
import { CommandError } from './command-error.js';

/** The TypeScript Berth itself is built with, for `--ts` projects. */
const typescriptRange = (): string => {
  const manifest = JSON.parse(readFileSync(join(berthRoot, 'package.json'), 'utf8')) as {
    devDependencies?: Record<string, string>;
  };
  return manifest.devDependencies?.typescript ?? '^5';
};

const notesModule = (
  ts: boolean,
): string => `import { defineCollection, defineModule, defineRoute, field } from 'berth';

/**
 * Notes, declared once: the fields are the validation, the table and the
 * API. The module gets the whole resource: GET /notes (filters, sort,
 * paging), GET/PATCH/DELETE /notes/:id, POST /notes, in /docs, with
 * change events (subscribe to "notes" over socket.io).
 *
 * Each note is its owner's: a signed-in user lists, reads, changes and
 * deletes only their own (others' answer 404), and the owner of a new note
 * is whoever creates it. Change \`access\` to open it up.
 */
export const notes = defineCollection({
  name: 'notes',
  fields: {
    title: field.text({ max: 200, searchable: true }),
    body: field.text({ required: false, searchable: true }),
    done: field.boolean({ default: false }),
    owner: field.reference('users', { onDelete: 'cascade', readOnly: true, indexed: true }),
  },
  access: { list: 'owner', read: 'owner', create: 'owner', update: 'owner', delete: 'owner' },
  sort: '-createdAt',
});

/** The notes module: the resource, and one route of its own beside it. */
export const notesModule = defineModule({
  name: 'notes',
  collections: [notes],
  routes: [
    defineRoute({
      method: 'GET',
      path: '/notes-summary',
      auth: 'user',
      summary: 'How many of my notes are open and done',
      async handler({ caller, services }) {
        const repository = services.storage.repository(notes);
        const count = async (done${ts ? ': boolean' : ''}) =>
          (
            await repository.list({
              where: [
                { field: 'owner', op: 'eq', value: caller${ts ? '!' : ''}.id },
                { field: 'done', op: 'eq', value: done },
              ],
              limit: 1,
            })
          ).total;
        return { open: await count(false), done: await count(true) };
      },
    }),
  ],
});
`;

const appFile = (name: string, manifest: string): string => `import { createRequire } from 'node:module';
import { accountsModule, createApp, usersModule } from 'berth';
import { notesModule } from './modules/notes.js';

const { version } = createRequire(import.meta.url)('${manifest}');

/**
 * The app: its modules. \`bin/${name}\` runs it; the tests call \`app.request\`.
 * Users sign up and log in (POST /auth/signup, /auth/login) with Berth's accounts.
 */
export const app = createApp({ name: '${name}', version, modules: [usersModule, accountsModule, notesModule] });
`;

const testFile = (ts: boolean): string => `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { app } from '../${ts ? 'src/' : ''}app.js';

const json = (body${ts ? ': unknown' : ''}, token${ts ? '?: string' : ''}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(token ? { authorization: \`Bearer \${token}\` } : {}) },
  body: JSON.stringify(body),
});

/** Signs a user up and logs them in; their token. */
async function signIn(email${ts ? ': string' : ''}) {
  const password = 'a long enough password';
  assert.equal((await app.request('/auth/signup', json({ email, password }))).status, 201);
  const login = await app.request('/auth/login', json({ email, password }));
  return (await login.json()${ts ? ' as { token: string }' : ''}).token;
}

// app.request answers in process, on SQLite in memory: no server, no port.
test('each user sees only their own notes', async () => {
  const ada = await signIn('ada@example.org');
  const bob = await signIn('bob@example.org');
  const created = await app.request('/notes', json({ title: 'Buy milk' }, ada));
  assert.equal(created.status, 201);
  const list = async (token${ts ? ': string' : ''}) =>
    ${ts ? '(' : ''}await (await app.request('/notes?done=false', { headers: { authorization: \`Bearer \${token}\` } })).json()${ts ? ' as { items: Array<{ title: string }> })' : ''};
  assert.deepEqual(
    (await list(ada)).items.map((note) => note.title),
    ['Buy milk'],
  );
  assert.deepEqual((await list(bob)).items, []);
  assert.equal((await app.request('/notes')).status, 401);
});
`;

const readme = (name: string, ts: boolean, berthPath: string): string => `# ${name}

An HTTP back end built on [Berth](${berthPath}).

\`\`\`sh
npm install
npm start            # ${ts ? 'compiles (npm run build), then runs' : 'the same as'} ./bin/${name} start; serves on port 4500
npm test             # ${ts ? 'compiles, then runs' : 'runs'} the tests in test/ (berth test: node --test on each file)
\`\`\`
${
  ts
    ? `
\`./bin/${name}\` runs the compiled code in \`dist/\` (\`npm install\` compiles it once): after changing
\`src/\`, run \`npm run build\` (or \`npm start\`, which builds first). The build empties \`dist/\` before
compiling, so a deleted or renamed file leaves no compiled copy behind.
`
    : ''
}
Notes are private: each user sees only their own. Sign up, log in, and send the token:

\`\`\`sh
curl -X POST localhost:4500/auth/signup -H 'content-type: application/json' \\
  -d '{"email": "ada@example.org", "password": "a long enough password"}'
TOKEN=$(curl -s -X POST localhost:4500/auth/login -H 'content-type: application/json' \\
  -d '{"email": "ada@example.org", "password": "a long enough password"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).token')
curl -X POST localhost:4500/notes -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"title": "First"}'
curl localhost:4500/notes -H "authorization: Bearer $TOKEN"
\`\`\`

\`./bin/${name} --help\` lists the commands (\`start\`, \`service load\`, \`token\`, …).

## Adding a collection

Declare it once in a module (\`${ts ? 'src/' : ''}modules/\`): its fields are its validation, its
table (SQLite, or PostgreSQL with \`DATABASE_URL\`) and its API.

\`\`\`${ts ? 'ts' : 'js'}
import { defineCollection, defineModule, field } from 'berth';

export const projects = defineCollection({
  name: 'projects',
  fields: {
    name: field.text({ max: 100, unique: true }),
    status: field.enum(['active', 'archived'], { default: 'active' }),
    due: field.date({ required: false }),
  },
});
export const projectsModule = defineModule({ name: 'projects', collections: [projects] });
\`\`\`

Add the module to \`${ts ? 'src/' : ''}app.${ts ? 'ts' : 'js'}\`, restart, and \`/projects\` answers:

\`\`\`sh
curl 'localhost:4500/projects?status=active&sort=-due&limit=10'
curl -g 'localhost:4500/projects?due[gte]=2026-01-01'
\`\`\`

At start Berth creates the table (or adds new fields), and \`/docs\` documents it.
`;

const files = (dir: string, name: string, berthPath: string, ts: boolean): Record<string, string> => {
  const source = ts ? 'src/' : '';
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    bin: { [name]: `bin/${name}` },
    scripts: ts
      ? {
          // dist/ is emptied first: a deleted or renamed source must not leave a stale compiled copy
          // (dist/test/ would still run its test).
          clean: `node -e "require('node:fs').rmSync('dist', { recursive: true, force: true })"`,
          build: 'npm run clean && tsc',
          prepare: 'npm run build',
          start: `npm run build && node bin/${name} start`,
          // `berth test` names each file to node --test (Node.js 20 takes folders, 22 and later patterns)
          // and passes when there is none.
          test: 'npm run build && berth test dist/test',
        }
      : { start: `node bin/${name} start`, test: 'berth test test' },
    engines: { node: '^20.19.0 || ^22.12.0 || ^24.0.0' },
    dependencies: { berth: `file:${berthPath}` },
    // npm 11 warns of install scripts not allowed here (npm 12 skips them): Berth's own (it builds when
    // installed from its sources; npm names a file: dependency by its path from the project, as
    // `npm install-scripts approve` writes it) and better-sqlite3's (the SQLite driver's native binding).
    allowScripts: { berth: true, [`file:${relative(dir, berthPath)}`]: true, 'better-sqlite3': true },
    ...(ts ? { devDependencies: { typescript: typescriptRange(), '@types/node': '^20.19.0' } } : {}),
  };
  return {
    'package.json': `${JSON.stringify(manifest, null, 2)}\n`,
    [`bin/${name}`]: `#!/usr/bin/env node
// ${name}'s command-line tool: \`${name} start\` and Berth's other commands.
import { runCli } from 'berth';
import { app } from '../${ts ? 'dist/src/' : ''}app.js';

await runCli(app);
`,
    // Compiled TypeScript runs from dist/src/: the manifest is two levels up.
    [`${source}app.${ts ? 'ts' : 'js'}`]: appFile(name, ts ? '../../package.json' : './package.json'),
    [`${source}modules/notes.${ts ? 'ts' : 'js'}`]: notesModule(ts),
    [`test/notes.test.${ts ? 'ts' : 'js'}`]: testFile(ts),
    ...(ts
      ? {
          'tsconfig.json': `${JSON.stringify(
            {
              compilerOptions: {
                target: 'ES2023',
                module: 'NodeNext',
                moduleResolution: 'NodeNext',
                strict: true,
                outDir: 'dist',
                rootDir: '.',
                skipLibCheck: true,
                types: ['node'],
              },
              include: ['src', 'test'],
            },
            null,
            2,
          )}\n`,
        }
      : {}),
    '.gitignore': `node_modules/\ndata/\n.env\n${ts ? 'dist/\n' : ''}`,
    'README.md': readme(name, ts, berthPath),
  };
};

/** Writes a new project that runs after `npm install` in it. Refuses a non-empty directory. */
export function scaffoldProject(
  target: string,
  options: { typescript?: boolean } = {},
): { dir: string; name: string; files: string[] } {
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
  for (const [path, content] of Object.entries(files(dir, name, berthRoot, options.typescript === true))) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    written.push(path);
  }
  chmodSync(join(dir, 'bin', name), 0o755);
  return { dir, name, files: written };
}
