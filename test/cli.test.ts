/** The operator's CLI, run in-process against real stores (an SQLite file, and Postgres when reachable). */
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { openStore } from '../src/index.js';
import { type Harness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';
import { sharedFixture } from './helpers/fixtures.js';
import { TestClock } from './helpers/store-fixture.js';

const fixture = sharedFixture('hermes-v11-small.db');

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const harnesses: Harness[] = [sqliteFileHarness(), await postgresHarness()];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`CLI [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    afterAll(() => h.cleanup());

    async function seeded(): Promise<string> {
      const url = await h.freshUrl();
      const clock = new TestClock();
      const store = await openStore(url, { clock: clock.now });
      clock.set(TestClock.START - 200 * 86400);
      await store.createSession('old', 'cron', { model: 'm-small' });
      await store.appendMessage('old', 'user', 'nightly docker cleanup');
      await store.updateTokenCounts('old', { inputTokens: 10, outputTokens: 2, estimatedCostUsd: 0.5 });
      await store.endSession('old', 'done');
      clock.reset();
      await store.createSession('new', 'cli', { model: 'm-big', modelConfig: { temperature: 0.2 } });
      await store.appendMessage('new', 'user', [{ type: 'text', text: 'deploy with docker?' }]);
      await store.appendMessage('new', 'assistant', 'yes', { reasoningDetails: [{ type: 'summary' }], toolCalls: [{ id: 'c1' }] });
      await store.updateTokenCounts('new', { inputTokens: 100, outputTokens: 20, estimatedCostUsd: 1.25 });
      await store.close();
      return url;
    }

    it.skipIf(fixture.missing !== undefined)(`imports a Hermes state.db with a closing summary${fixture.missing ? ` (skipped: ${fixture.missing})` : ''}`, async () => {
      const url = await h.freshUrl();
      const { code, out } = await run('import', fixture.path!, '--to', url);
      expect(code).toBe(0);
      expect(out).toMatch(/^Imported 60 sessions, 305 messages in [\d.]+ s \([\d,]+ msg\/s\) into .*; verified \(\d+ search spot-checks?\)\.\n$/);
      expect(JSON.parse((await run('stats', '--db', url, '--json')).out)).toMatchObject({ sessions: 60, messages: 305 });
      expect((await run('import', '/no/such/state.db', '--to', url)).code).toBe(2);
    });

    it.skipIf(fixture.missing !== undefined)(`exits 1 when the store does not match the file after a merge that kept the store's rows${fixture.missing ? ` (skipped: ${fixture.missing})` : ''}`, async () => {
      const url = await h.freshUrl();
      const store = await openStore(url);
      await store.createSession('20260604_000000_1da3a1', 'mine');
      await store.close();
      const refused = await run('import', fixture.path!, '--to', url);
      expect(refused.code).toBe(2);
      expect(refused.err).toMatch(/already holds different data.*--merge keep-target/s);
      const merged = await run('import', fixture.path!, '--to', url, '--merge', 'keep-target');
      expect(merged.code).toBe(1);
      expect(merged.out).toMatch(/; VERIFICATION FAILED:\n {2}session 20260604_000000_1da3a1: source, model, .* differ\n/);
      expect((await run('import', fixture.path!, '--to', url, '--merge', 'keep-target', '--no-verify')).out).toMatch(/\(not verified\)\n$/);
    });

    it('migrates, then reports that the store is up to date', async () => {
      const url = await h.freshUrl();
      const first = await run('migrate', '--db', url);
      expect(first.code).toBe(0);
      expect(first.out).toMatch(/applied 0000_/);
      const again = await run('migrate', '--db', url);
      expect(again.out).toMatch(/up to date/);
      expect((await run('status', '--db', url)).out).toMatch(/pending: none/);
    });

    it('searches with filters, as text or JSON lines', async () => {
      const url = await seeded();
      const text = await run('search', 'docker', '--db', url);
      expect(text.code).toBe(0);
      expect(text.out).toMatch(/2 results/);
      const json = await run('search', 'docker', '--db', url, '--source', 'cron', '--json');
      const hits = json.out.trim().split('\n').map((l) => JSON.parse(l) as { sessionId: string });
      expect(hits.map((h) => h.sessionId)).toEqual(['old']);
      expect((await run('search', 'docker', '--db', url, '--exclude-source', 'cron', '--json')).out.trim().split('\n')).toHaveLength(1);
    });

    it('reports counts, tokens and cost by model and source', async () => {
      const url = await seeded();
      const { code, out } = await run('stats', '--db', url, '--json');
      expect(code).toBe(0);
      const stats = JSON.parse(out);
      expect(stats).toMatchObject({ sessions: 2, messages: 3 });
      expect(stats.databaseBytes).toBeGreaterThan(0);
      const big = stats.byModel.find((g: { key: string }) => g.key === 'm-big');
      expect(big).toMatchObject({ sessions: 1, messages: 2, inputTokens: 100, outputTokens: 20, estimatedCostUsd: 1.25 });
      expect(stats.bySource.map((g: { key: string }) => g.key).sort()).toEqual(['cli', 'cron']);
      expect((await run('stats', '--db', url)).out).toMatch(/sessions 2, messages 3/);
    });

    it("exports JSON lines in Hermes' export_session shape", async () => {
      const url = await seeded();
      const { code, out, err } = await run('export', '--db', url);
      expect(code).toBe(0);
      expect(err).toMatch(/exported 2 sessions/);
      const sessions = out.trim().split('\n').map((l) => JSON.parse(l));
      expect(sessions.map((s: { id: string }) => s.id)).toEqual(['new', 'old']);
      const exported = sessions[0];
      expect(exported).toMatchObject({ id: 'new', source: 'cli', model_config: '{"temperature": 0.2}', input_tokens: 100 });
      expect(exported.messages[0]).toMatchObject({ session_id: 'new', role: 'user', content: [{ type: 'text', text: 'deploy with docker?' }] });
      expect(exported.messages[1]).toMatchObject({ tool_calls: [{ id: 'c1' }], reasoning_details: '[{"type": "summary"}]' });
      const one = await run('export', '--db', url, '--session', 'old');
      expect(one.out.trim().split('\n')).toHaveLength(1);
      expect((await run('export', '--db', url, '--session', 'nope')).code).toBe(2);
    });

    it('prunes old ended sessions, with a dry run that deletes nothing', async () => {
      const url = await seeded();
      const dry = await run('prune', '--older-than', '90', '--db', url, '--dry-run');
      expect(dry.out).toMatch(/would prune 1 session/);
      expect(JSON.parse((await run('stats', '--db', url, '--json')).out).sessions).toBe(2);
      expect((await run('prune', '--older-than', '90', '--db', url, '--source', 'cli')).out).toMatch(/pruned 0 sessions/);
      expect((await run('prune', '--older-than', '90', '--db', url)).out).toMatch(/pruned 1 session/);
      expect(JSON.parse((await run('stats', '--db', url, '--json')).out).sessions).toBe(1);
    });
  });
}

describe('CLI usage and failures', () => {
  it('exits 2 on usage errors and 1 on a store it cannot open, naming the URL without its password', async () => {
    expect((await run()).code).toBe(2);
    expect((await run('bogus')).code).toBe(2);
    expect((await run('prune')).code).toBe(2);
    expect((await run('prune', '--older-than', 'soon')).code).toBe(2);
    expect((await run('search', 'x', '--limit', '-3')).code).toBe(2);
    expect((await run('search', 'x', '--db', 'mysql://h/db')).code).toBe(2);
    const unreachable = await run('stats', '--db', 'postgres://alice:s3cr3t@127.0.0.1:1/app');
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toContain('postgres://alice:***@127.0.0.1:1/app');
    expect(unreachable.err).not.toContain('s3cr3t');
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/migrate/);
  });
});
