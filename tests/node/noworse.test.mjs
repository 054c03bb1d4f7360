// Hostile-input audit (issue 14): every output of `fix`, `copy` and
// `retarget` carries no validator error or warning code that its input did
// not already carry. Run on every corpus file (when ../shared is present)
// and on synthetic characters built here, whose new Tail_* joints get
// inverse bind matrices (ACCESSOR_INVALID_IBM when the last row is not
// exactly 0 0 0 1).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import validator from 'gltf-validator';
import { corpusFile, corpusDir } from './corpus.mjs';

const cli = process.env.TB_CLI;
if (!cli || !fs.existsSync(cli)) {
  console.log('skip: needs TB_CLI');
  process.exit(77);
}
fs.mkdirSync(process.env.TB_TMP || '/tmp', { recursive: true }); // absent when run alone
const tmp = fs.mkdtempSync(path.join(process.env.TB_TMP || '/tmp', 'nw-'));
let passed = 0, failed = 0;

async function codes(file) {
  const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), { maxIssues: 0 });
  // severity 0 = error, 1 = warning
  return new Set(report.issues.messages.filter((m) => m.severity <= 1).map((m) => m.code));
}

async function check(label, input, cmd, extra = []) {
  const out = path.join(tmp, `${path.basename(input, path.extname(input))}.${cmd}.glb`);
  try {
    try {
      execFileSync(cli, [cmd, '-q', input, cmd === 'copy' ? out : '-o', ...(cmd === 'copy' ? [] : [out]), ...extra],
        { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      // a refusal (exit 1, one line, no output) writes nothing to judge
      if (e.status !== 1 || fs.existsSync(out)) throw e;
      console.log(`ok   ${cmd} ${label}: refused, no output (${String(e.stderr).trim().split('\n')[0]})`);
      passed++;
      return;
    }
    const a = await codes(input), b = await codes(out);
    const added = [...b].filter((c) => !a.has(c));
    if (added.length) throw new Error('new validator codes: ' + added.join(', '));
    console.log(`ok   ${cmd} ${label}: ${b.size} error/warning code(s), none new`);
    passed++;
  } catch (e) {
    console.log(`FAIL ${cmd} ${label}: ${e.message}${e.stderr ? ' ' + e.stderr : ''}`);
    failed++;
  }
}

const files = [];
for (const v of ['tail_hips', 'tail_welded', 'tail_long']) {
  const f = path.join(tmp, `${v}.glb`);
  try {
    execFileSync(cli, ['synth', '--variant', v, '-o', f], { stdio: 'ignore' });
    files.push([`synth ${v}`, f]);
  } catch { /* variant absent: the corpus still runs */ }
}
const shared = process.env.TB_SHARED_DIR;
const corpus = corpusDir();
if (corpus) {
  for (const dir of ['characters', 'clips', 'reference']) {
    const d = path.join(corpus, dir);
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).filter((f) => f.endsWith('.glb')).sort()) files.push([`${dir}/${f}`, path.join(d, f)]);
  }
  // Real bodies with a tail added (docs/synth.md "Fixtures on real
  // bodies"): Xbot's bind poses are rotated and scaled, so the general 4x4
  // inverse that gives the new Tail_* joints their inverse bind matrices
  // leaves last rows like 1.0000001 (measured: 5-6 ACCESSOR_INVALID_IBM per
  // fixed file when tb_doc_add_accessor does not make the row exact).
  for (const [body, fixture] of [['clips/Xbot_agree_run_walk.glb', 'hang_shell_leg'],
    ['clips/Xbot_agree_run_walk.glb', 'back_shell_hips'], ['clips/threejs_Soldier_rexport.glb', 'curl_shell_nearest']]) {
    const b = path.join(corpus, body);
    if (!fs.existsSync(b)) continue;
    const f = path.join(tmp, `${path.basename(body, '.glb')}+${fixture}.glb`);
    execFileSync(cli, ['synth', '--onto', b, '--fixture', fixture, '-o', f], { stdio: 'ignore' });
    files.push([`${body}+${fixture}`, f]);
  }
}
for (const [label, f] of files) {
  await check(label, f, 'copy');
  await check(label, f, 'fix');
}
const lib = corpus && path.join(corpus, 'clips', 'Xbot_agree_run_walk.glb');
if (lib && fs.existsSync(lib)) {
  for (const [label, f] of files.filter(([l]) => l.startsWith('synth') || l.startsWith('characters')))
    await check(label, f, 'retarget', ['--clips', lib]);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
