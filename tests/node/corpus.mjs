// Corpus files for the Node checks, with honest skips: a file under
// ../shared/corpus that is absent fails the check when TB_REQUIRE_CORPUS=1
// (CI, where ../shared exists), naming the file; otherwise the skip is
// printed and appended to $TB_SKIP_LOG, which `make test` counts.
import fs from 'node:fs';
import path from 'node:path';

const shared = process.env.TB_SHARED_DIR || '';
export const required = process.env.TB_REQUIRE_CORPUS === '1';
const test = path.basename(process.argv[1] || 'node', '.test.mjs');

export function noteSkip(what) {
  if (required) {
    console.log(`FAIL ${test}: TB_REQUIRE_CORPUS=1 but ${what} is missing`);
    process.exit(1);
  }
  console.log(`skip ${test}: missing ${what}`);
  const log = process.env.TB_SKIP_LOG;
  if (log) fs.appendFileSync(log, `node_${test}: missing ${what}\n`);
}

// ../shared/corpus, or null (skip noted) when absent.
export function corpusDir() {
  const d = shared && path.join(shared, 'corpus');
  if (d && fs.existsSync(d)) return d;
  noteSkip(d || '../shared/corpus (TB_SHARED_DIR unset)');
  return null;
}

// ../shared/corpus/REL, or null (skip noted) when it or the folder is absent.
export function corpusFile(rel) {
  const d = shared && path.join(shared, 'corpus');
  if (!d || !fs.existsSync(d)) { noteSkip(d || '../shared/corpus'); return null; }
  const f = path.join(d, rel);
  if (fs.existsSync(f)) return f;
  noteSkip(f);
  return null;
}
