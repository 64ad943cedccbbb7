/**
 * The app and hermes-sessiondb in one Postgres database (`npm start`, DATABASE_URL as in src/db.ts):
 *   1. migrate the app's own tables (public.app_notes, public.sessions),
 *   2. open the store in schema "hermes" on the app's own client: it migrates its tables itself,
 *   3. write a session and its messages through the store, and an app note about that session,
 *   4. one Drizzle query joining the app's notes with the store's messages.
 * Prints one JSON line (the test reads it).
 */
import { asc, eq } from 'drizzle-orm';
import { openStore } from 'hermes-sessiondb';
import { connect, databaseUrl } from './db.js';
import { HERMES_SCHEMA, hermes } from './hermes.js';
import { appNotes } from './schema/notes.js';

const app = await connect(databaseUrl());
try {
  await app.migrate();
  const store = await openStore(app.client, { schema: HERMES_SCHEMA });
  try {
    const sessionId = `support-${Date.now().toString(36)}`;
    await store.createSession(sessionId, 'web', { model: 'demo-model' });
    await store.appendMessages(sessionId, [
      { role: 'user', content: 'The nightly deploy failed with a healthcheck timeout' },
      { role: 'assistant', content: 'Raise the healthcheck timeout to 30 seconds and redeploy' },
    ]);
    await app.db.insert(appNotes).values({ hermesSessionId: sessionId, body: 'customer asked for a postmortem' });

    const joined = await app.db
      .select({ note: appNotes.body, role: hermes.messages.role, content: hermes.messages.content })
      .from(appNotes)
      .innerJoin(hermes.messages, eq(hermes.messages.sessionId, appNotes.hermesSessionId))
      .where(eq(appNotes.hermesSessionId, sessionId))
      .orderBy(asc(hermes.messages.id));

    const hits = await store.searchMessages('healthcheck', { limit: 5 });
    console.log(
      JSON.stringify({ sessionId, joined, searchHits: hits.map((h) => ({ sessionId: h.sessionId, role: h.role })) }),
    );
  } finally {
    await store.close(); // leaves the app's client open: the app opened it
  }
} finally {
  await app.close();
}
