import { readFile, writeFile } from 'node:fs/promises';
import { SCHEMA_FILES } from './schema-files.ts';

/** `npm run schema` writes schema/; `npm run schema:check` fails when schema/ differs from the code. */
const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [file, generate] of Object.entries(SCHEMA_FILES)) {
  const fresh = generate();
  if (check) {
    const current = await readFile(file, 'utf8').catch(() => '');
    if (current !== fresh) stale.push(file);
  } else {
    await writeFile(file, fresh);
    process.stdout.write(`wrote ${file}\n`);
  }
}
if (stale.length > 0) {
  process.stderr.write(`Out of date: ${stale.join(', ')}. Run \`npm run schema\` and commit the result.\n`);
  process.exit(1);
}
if (check) process.stdout.write('schema/ is current\n');
