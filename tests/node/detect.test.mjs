// `tailbone fix` output through the Khronos glTF validator (SPEC A9: "a
// valid GLB"): no errors, and no warning the input did not already have.
// Files: the corpus characters with tails (../shared) and synthetic variants.
//
// Env: TB_CLI (tailbone binary), TB_SHARED_DIR (../shared), TB_TMP (scratch).
// Exit 0 pass, 77 skip (no input files), 1 fail.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

import validator from 'gltf-validator';
import { corpusFile, corpusDir } from './corpus.mjs';

const cli = process.env.TB_CLI;
const shared = process.env.TB_SHARED_DIR;
const tmp = join(process.env.TB_TMP || '/tmp', `detect-node-${process.pid}`);
if (!cli || !existsSync(cli)) {
  console.log('skip: TB_CLI not set');
  process.exit(77);
}
mkdirSync(tmp, { recursive: true });

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { passed++; console.log(`ok   ${what}`); }
  else { failed++; console.log(`FAIL ${what}`); }
}

const inputs = [];
for (const rel of ['characters/banter_Wolf.glb', 'characters/banter_Bone_Demon.glb']) {
  const f = corpusFile(rel);
  if (f) inputs.push(f);
}
for (const v of ['tail_leg', 'tail_fur', 'tail_back', 'tail_metres_bare', 'scabbard']) {
  const f = join(tmp, `${v}.glb`);
  try {
    execFileSync(cli, ['synth', '--variant', v, '-o', f], { stdio: 'ignore' });
    inputs.push(f);
  } catch { /* variant absent: skip it */ }
}
if (inputs.length === 0) {
  console.log('skip: no input files');
  process.exit(77);
}

const codes = (r, sev) => new Set(r.issues.messages.filter((m) => m.severity === sev).map((m) => m.code));
for (const f of inputs) {
  const out = join(tmp, basename(f, '.glb') + '.fixed.glb');
  const report = join(tmp, basename(f, '.glb') + '.report.json');
  execFileSync(cli, ['fix', f, '-o', out, '--report', report, '-q']);
  const rep = JSON.parse(readFileSync(report, 'utf8'));
  check(rep.changed === true, `${basename(f)}: fix changed something`);
  const before = await validator.validateBytes(new Uint8Array(readFileSync(f)));
  const after = await validator.validateBytes(new Uint8Array(readFileSync(out)));
  check(after.issues.numErrors === 0, `${basename(f)}: output has no validator errors (${after.issues.numErrors})`);
  const newWarnings = [...codes(after, 1)].filter((c) => !codes(before, 1).has(c));
  check(newWarnings.length === 0, `${basename(f)}: no new warning kinds (${newWarnings.join(', ')})`);
  for (const a of rep.appendages.filter((x) => x.decision === 'chain'))
    check(a.distance_before >= 2.5 * a.distance_after,
          `${basename(f)}: weighted bone distance ${a.distance_before.toFixed(4)} -> ${a.distance_after.toFixed(4)}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
