import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LENSES, research } from '../../../src/core/research.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { Snapshot } from '../../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/**
 * Research's topic queries read topics_fts and subject_terms (schema 8), with the answers
 * subjects_fts gave (a kept snapshot of schema 7, made here from the sample's by dropping them,
 * is still searched there); and they read nothing else of subjects_fts but its averages.
 */
let current: Snapshot;
let file: string;
const opened: Snapshot[] = [];
const copyOf = (sql: string) => {
  const copy = join(tempDir('ri-topic-search-'), 'copy.sqlite');
  copyFileSync(file, copy);
  const db = new Database(copy);
  db.exec(sql);
  db.close();
  const s = new Snapshot(current.version, copy);
  opened.push(s);
  return s;
};
beforeAll(async () => {
  const sample = await sampleDataDir();
  file = snapshotFile(sample.snapshots, sample.version);
  current = new Snapshot(sample.version, file);
});
afterAll(() => {
  current.retire();
  for (const s of opened) s.retire();
});

const EXPRESSIONS = [
  '"oxygen"',
  '"water" OR "soil"',
  '"oxygen" OR ("hydrogen" AND "evolution") OR "her"',
  '"lithium" OR "li" OR "ion" OR "battery"',
  '"catalyst" OR "catalyst"',
];
const viewer = { hriAvailable: true, publicUrl: 'http://localhost' };

describe('the topics search', () => {
  it('holds the topics rows of subjects_fts, under the same rowids', () => {
    const db = new Database(file, { readonly: true });
    const topics = db.prepare('SELECT rowid, id, name, description FROM topics_fts ORDER BY rowid').all();
    expect(topics.length).toBeGreaterThan(1000);
    expect(topics).toEqual(
      db
        .prepare("SELECT rowid, id, name, description FROM subjects_fts WHERE type = 'topic' ORDER BY rowid")
        .all(),
    );
    db.close();
  });

  it('answers as a kept snapshot of schema 7 searched in subjects_fts', () => {
    const older = copyOf(
      "DROP TABLE topics_fts; DROP TABLE subject_terms; UPDATE meta SET value = '7' WHERE key = 'schema_version'",
    );
    for (const expr of EXPRESSIONS) {
      const matches = current.reader.topicTextMatches(expr, 20);
      expect(matches.length).toBeGreaterThan(0);
      expect(older.reader.topicTextMatches(expr, 20)).toEqual(matches);
      const rows = matches.map((m) => m.row);
      for (const group of ['"oxygen"', '("her" OR ("hydrogen" AND "evolution"))', '"zzqx"']) {
        const found = current.reader.searchRowsMatching(group, rows);
        expect(older.reader.searchRowsMatching(group, rows)).toEqual(found);
        expect(current.reader.hasTopicMatch(group)).toBe(older.reader.hasTopicMatch(group));
      }
      expect(older.reader.describedTopics(expr)).toEqual(current.reader.describedTopics(expr));
      expect(older.reader.hasTopicMatch(expr)).toBe(true);
      expect(current.reader.hasTopicMatch(expr)).toBe(true);
    }
    // Every word of a hundred topics' names, ranked in full: the same rows and scores, to the bit.
    const db = new Database(file, { readonly: true });
    const names = db.prepare('SELECT name FROM topics_fts LIMIT 100').pluck().all() as string[];
    db.close();
    const words = new Set(names.flatMap((n) => n.toLowerCase().split(/[^\p{L}\p{N}]+/u)).filter((w) => w));
    expect(words.size).toBeGreaterThan(100);
    for (const w of words)
      expect(current.reader.topicTextMatches(`"${w}"`, 5000)).toEqual(
        older.reader.topicTextMatches(`"${w}"`, 5000),
      );
    for (const q of ['oxygen evolution', 'HER Pt', 'groundwater arsenic', 'zeolite'])
      expect(JSON.stringify(research(older, { q, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer))).toBe(
        JSON.stringify(research(current, { q, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer)),
      );
  });

  it('finds the topics without their rows in subjects_fts', () => {
    const withoutTopics = copyOf("DELETE FROM subjects_fts WHERE type = 'topic'");
    expect(withoutTopics.reader.hasTopicMatch('"oxygen"')).toBe(true);
    expect(withoutTopics.reader.describedTopics('"oxygen"')).toEqual(
      current.reader.describedTopics('"oxygen"'),
    );
    const ids = (s: Snapshot) => s.reader.topicTextMatches('"oxygen" OR "water"', 20).map((m) => m.id);
    expect(ids(withoutTopics).length).toBe(20);
    // Read as schema 7, the same file has no topics to search.
    const asSeven = copyOf(
      "DELETE FROM subjects_fts WHERE type = 'topic'; UPDATE meta SET value = '7' WHERE key = 'schema_version'",
    );
    expect(asSeven.reader.hasTopicMatch('"oxygen"')).toBe(false);
    expect(current.reader.hasTopicMatch('"zzqx"')).toBe(false);
    expect(ids(asSeven)).toEqual([]);
  });
});
