/**
 * `npx tsx scripts/exports-snapshot.ts [--write]`: the public exports of every package.json entry point, which
 * test/public-exports.test.ts compares with the committed snapshot. Without --write, prints how the source differs
 * from the snapshot; with --write, records the source's exports as the new snapshot (review the diff: a removed
 * or changed export breaks users).
 */
import fs from 'node:fs';
import { type ExportsSnapshot, exportChanges, publicExports, SNAPSHOT_FILE } from '../test/helpers/public-exports.js';

const write = process.argv.includes('--write');
const entries = await publicExports();

if (write) {
  const snapshot: ExportsSnapshot = {
    comment:
      'Public exports of each package.json entry point, with their kind (runtime typeof, class, or type for a ' +
      'type-only name). test/public-exports.test.ts fails when one disappears, changes kind, or is new. ' +
      'Regenerate with: npx tsx scripts/exports-snapshot.ts --write',
    entries,
  };
  fs.writeFileSync(SNAPSHOT_FILE, `${JSON.stringify(snapshot, null, 2)}\n`);
  for (const [entry, names] of Object.entries(entries)) console.log(`${entry}: ${Object.keys(names).length} names`);
  console.log(`wrote ${SNAPSHOT_FILE}`);
} else {
  const previous = JSON.parse(fs.readFileSync(SNAPSHOT_FILE, 'utf8')) as ExportsSnapshot;
  const { broken, added } = exportChanges(previous.entries, entries);
  for (const line of [...broken, ...added]) console.log(line);
  if (broken.length + added.length === 0) console.log('exports match the snapshot');
  process.exitCode = broken.length + added.length === 0 ? 0 : 1;
}
