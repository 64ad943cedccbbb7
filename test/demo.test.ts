/** The README's main job: `npm run demo` writes a Hermes-format file, imports it into SQLite and PGlite, verified. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('npm run demo', () => {
  it('imports the Hermes-format file it writes into both embedded backends, verified, and finds the same messages', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const sections = run.stdout.split(/\n(?=sqlite:|pglite:)/).slice(1);
    expect(sections.map((s) => s.split(' ')[0]!.split(':')[0])).toEqual(['sqlite', 'pglite']);
    for (const s of sections) {
      expect(s).toMatch(/import: 4 sessions, 10 messages in [\d.]+ s; verified/);
      expect(s).toMatch(/search 记忆断裂: 1 hit/);
      expect(s).toMatch(/lineage: 20261027_091500_a1b2c3 "Docker deploy" -> 20261027_093000_d4e5f6 "Docker deploy #2"/);
    }
    // Both backends find the same sessions for every query, in their own order.
    const hits = (s: string) => [...s.matchAll(/^ {4}\[(\S+)\] (\S+)/gm)].map((m) => `${m[1]} ${m[2]}`).sort();
    expect(hits(sections[0]!)).toEqual(hits(sections[1]!));
  }, 120_000);
});
