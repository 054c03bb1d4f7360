// `tailbone synth --onto` fixtures judged by the Khronos glTF validator: every
// fixture on every body adds no error or warning the body did not already
// have. Real bodies are skipped when ../shared is absent.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import validator from 'gltf-validator';
import { corpusFile, corpusDir } from './corpus.mjs';

const cli = process.env.TB_CLI;
if (!cli || !fs.existsSync(cli)) {
  console.log('skip: TB_CLI is not set to the tailbone binary');
  process.exit(77);
}
const tmp = fs.mkdtempSync(path.join(process.env.TB_TMP || '/tmp', 'fixtures-'));
const shared = process.env.TB_SHARED_DIR || '';
const run = (...args) => execFileSync(cli, args, { encoding: 'utf8' });
const issues = async (file) => {
  const r = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), { maxIssues: 0 });
  return r.issues.messages.filter((m) => m.severity <= 1).map((m) => `${m.code}`);
};

const plain = path.join(tmp, 'plain.glb');
run('synth', '--variant', 'plain', '-o', plain);
const bodies = [['synth:plain', plain]];
for (const f of ['clips/Xbot_agree_run_walk.glb', 'clips/threejs_Soldier_rexport.glb']) {
  const p = corpusFile(f);
  if (p) bodies.push([p, p]);
}
const fixtures = run('synth', '--fixtures').trim().split('\n');
let passed = 0, failed = 0;
for (const [onto, file] of bodies) {
  const base = new Set(await issues(file));
  for (const fx of fixtures) {
    if (fx.startsWith('rigid_') && onto !== 'synth:plain') continue;
    const out = path.join(tmp, 'fx.glb');
    run('synth', '--onto', onto, '--fixture', fx, '-o', out);
    const added = [...new Set((await issues(out)).filter((c) => !base.has(c)))];
    if (added.length) {
      console.log(`FAIL ${path.basename(onto)} ${fx}: ${added.join(' ')}`);
      failed++;
    } else {
      passed++;
    }
  }
}
console.log(`${passed} fixtures valid, ${failed} with new validator issues`);
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
