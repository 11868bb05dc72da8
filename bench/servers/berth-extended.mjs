// Berth's own app with extension points in use, for `npm run bench -- extensions`.
// BENCH_VARIANT picks what is declared, so each difference against the bare app
// is what that extension point costs on a request that does not use it:
//   bare      Berth's modules without accounts (no authenticator, no rules beyond public/admin)
//   default   `berth start` as shipped: accounts (an authenticator, owner rules on users)
//   hooks     default + a request hook and a books write hook that do nothing
//   jwt       default + a JWT authenticator (its keys never fetched: no request carries a JWT)
//   rule      default + books listed under a rule in code (anyone: `() => true`)
import {
  accountsModule,
  books,
  booksModule,
  createApp,
  createBerthApp,
  defineCollection,
  defineModule,
  jwtAuthenticator,
  runCli,
} from '../../dist/internal.js';

const variant = process.env.BENCH_VARIANT ?? 'default';
const berth = createBerthApp();
let modules = berth.options.modules;
const extra = {};
if (variant === 'bare') modules = modules.filter((module) => module !== accountsModule);
if (variant === 'hooks') {
  extra.hooks = {
    onRequest: () => {},
    onResponse: () => {},
    collections: { books: { beforeCreate: () => {} } },
  };
}
if (variant === 'jwt') {
  extra.authenticators = [
    jwtAuthenticator({
      jwksUrl: 'http://127.0.0.1:9/jwks.json',
      issuer: 'https://id.example/',
      audience: 'bench',
    }),
  ];
}
if (variant === 'rule') {
  const ruled = defineCollection({
    name: books.name,
    fields: books.fields,
    sort: books.sort,
    aliases: books.aliases,
    seed: books.seed,
    access: { ...books.access, list: () => true },
  });
  modules = modules.map((module) =>
    module === booksModule ? defineModule({ ...booksModule, collections: [ruled] }) : module,
  );
}
await runCli(createApp({ ...berth.options, modules, ...extra }));
