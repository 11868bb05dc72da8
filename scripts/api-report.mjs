// Checks Berth's public API against its reports in etc/api/ (one per package entry: berth, berth/core,
// berth/browser, berth/client), from the declarations in dist/ (build first). `--local` writes the reports instead:
// a change to a public entry is then a visible diff of etc/api/*.api.md, to commit with the change.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const local = process.argv.includes('--local');
let changed = 0;
for (const name of ['berth', 'berth-core', 'berth-browser', 'berth-client']) {
  const config = ExtractorConfig.loadFileAndPrepare(
    new URL(`../etc/api-extractor/${name}.json`, import.meta.url).pathname,
  );
  const result = Extractor.invoke(config, { localBuild: local, showVerboseMessages: false });
  if (result.apiReportChanged) changed++;
  if (!result.succeeded) {
    process.stderr.write(
      result.apiReportChanged
        ? `the public API of ${name} differs from etc/api/${name}.api.md: run \`npm run api\` and commit the report with the change\n`
        : `api-extractor failed for ${name}: ${result.errorCount} errors, ${result.warningCount} warnings\n`,
    );
    process.exitCode = 1;
  }
}
if (local)
  process.stdout.write(
    changed ? `wrote ${changed} changed report(s) in etc/api/\n` : 'the public API is unchanged\n',
  );
