/**
 * The PGlite package (and its WASM build) is loaded only when a PGlite store is opened: SQLite and server
 * users, and CommonJS apps loading us through require(esm), never load it. Observed in a child process with a
 * module-resolution hook, not inferred from the source.
 */
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { spawnTs, waitForLine } from './helpers/processes.js';

it('loads @electric-sql/pglite only when a PGlite store is opened', async () => {
  const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
  const child = spawnTs('./module-load-probe.ts', [entry]);
  try {
    const afterSqlite = JSON.parse(await waitForLine(child, (line) => line.includes('"step":"sqlite"'))) as {
      pglite: string[];
    };
    expect(afterSqlite.pglite).toEqual([]);
    const afterPglite = JSON.parse(await waitForLine(child, (line) => line.includes('"step":"pglite"'))) as {
      pglite: string[];
    };
    // The probe sees the package when it is used: an empty list above is not a blind hook.
    expect(afterPglite.pglite.some((url) => url.includes('@electric-sql/pglite'))).toBe(true);
  } finally {
    child.kill();
  }
}, 60_000);
