/**
 * The public API does not change by accident: every name each package.json entry point exported at the last
 * release (test/package/exports.snapshot.json) is still exported with the same kind, and a new name is added to
 * the snapshot on purpose (`npx tsx scripts/exports-snapshot.ts --write`, reviewed in the diff).
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ExportsSnapshot,
  exportChanges,
  type PublicExports,
  publicExports,
  SNAPSHOT_FILE,
} from './helpers/public-exports.js';

const snapshot = JSON.parse(fs.readFileSync(SNAPSHOT_FILE, 'utf8')) as ExportsSnapshot;
let current: PublicExports;

beforeAll(async () => {
  current = await publicExports();
});

describe('public exports', () => {
  it('keeps every export of the snapshot, with the same kind', () => {
    const { broken } = exportChanges(snapshot.entries, current);
    expect(broken, `public exports removed or changed (a breaking change):\n${broken.join('\n')}`).toEqual([]);
  });

  it('has no export missing from the snapshot', () => {
    const { added } = exportChanges(snapshot.entries, current);
    expect(
      added,
      `new public exports: if intended, add them with \`npx tsx scripts/exports-snapshot.ts --write\`:\n${added.join('\n')}`,
    ).toEqual([]);
  });
});
