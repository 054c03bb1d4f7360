// Cross-check of `tailbone measure` skinning with three.js (SPEC C).
//
// For each file, `tailbone measure FILE --clip NAME --dump-positions OUT`
// writes the skinned world positions at the 24 measured instants (layout in
// docs/measure.md). three.js loads the same file, plays the same clip with an
// AnimationMixer at the same instants and skins every vertex with
// SkinnedMesh.getVertexPosition (then matrixWorld: three binds glTF skins with
// an identity bind matrix in attached mode, so matrixWorld · getVertexPosition
// is glTF's sum_i w_i W_j IBM_j p whatever the mesh node's transform). Every
// coordinate must agree within 1e-4 of the model height H (world units).
//
// Env: TB_CLI (tailbone binary), TB_SHARED_DIR (../shared), TB_TMP (scratch).
// Exit 0 pass, 77 skip (no input files), 1 fail.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { stripTextures } from './gltf_util.mjs';
import { corpusFile, corpusDir } from './corpus.mjs';

const TOL_H = 1e-4;
const cli = process.env.TB_CLI;
const shared = process.env.TB_SHARED_DIR;
const tmp = process.env.TB_TMP || '/tmp';
if (globalThis.self === undefined) globalThis.self = globalThis; // GLTFLoader reads self.URL

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { passed++; console.log(`ok   ${what}`); }
  else { failed++; console.log(`FAIL ${what}`); }
}

// Cases: [file, clip name as `tailbone measure --clip` takes it].
const cases = [];
for (const [rel, clip] of [['clips/Xbot_agree_run_walk.glb', 'walk'],
                           ['clips/Xbot_agree_run_walk.glb', 'agree'],
                           ['clips/threejs_Soldier_rexport.glb', 'Walk'],
                           ['clips/threejs_Soldier_rexport.glb', 'Run'],
                           ['reference/khronos_Fox.glb', 'Walk']]) {
  const f = corpusFile(rel);
  if (f) cases.push([f, clip]);
}
// Synthetic characters make the check independent of ../shared.
if (cli) {
  try {
    const list = execFileSync(cli, ['synth', '--list'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    if (/tail_leg/.test(list)) {
      mkdirSync(tmp, { recursive: true });
      const f = join(tmp, 'measure_node_tail_leg.glb');
      execFileSync(cli, ['synth', '--variant', 'tail_leg', '-o', f], { stdio: 'ignore' });
      cases.push([f, 'Walk']);
    }
  } catch { /* no synth command yet */ }
}
if (!cli || !existsSync(cli) || cases.length === 0) {
  console.log('skip: needs TB_CLI and ../shared/corpus clip files (or `tailbone synth`)');
  console.log('0 passed, 0 failed');
  process.exit(77);
}
mkdirSync(tmp, { recursive: true });


function readDump(path) {
  const b = readFileSync(path);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.subarray(0, 6).toString() !== 'TBPOS1') throw new Error('bad dump magic');
  const instants = dv.getUint32(8, true), vertices = dv.getUint32(12, true), prims = dv.getUint32(16, true);
  let at = 20;
  const rows = [];
  for (let p = 0; p < prims; p++, at += 20) {
    rows.push({ node: dv.getUint32(at, true), mesh: dv.getUint32(at + 4, true), primitive: dv.getUint32(at + 8, true),
                offset: dv.getUint32(at + 12, true), count: dv.getUint32(at + 16, true) });
  }
  const times = new Float32Array(b.buffer.slice(b.byteOffset + at, b.byteOffset + at + instants * 4));
  at += instants * 4;
  const pos = new Float32Array(b.buffer.slice(b.byteOffset + at, b.byteOffset + at + instants * vertices * 12));
  return { instants, vertices, rows, times, pos };
}

const parse = (ab) => new Promise((resolve, reject) => new GLTFLoader().parse(ab, '', resolve, reject));

for (const [file, clipName] of cases) {
  const label = `${file.split('/').pop()} ${clipName}`;
  try {
    const dumpPath = join(tmp, `measure_node_${process.pid}.bin`);
    const meta = JSON.parse(execFileSync(cli, ['measure', file, '--clip', clipName, '--json', '--no-spring',
                                               '--dump-positions', dumpPath], { encoding: 'utf8' }));
    const info = meta.clips[0];
    const d = readDump(dumpPath);
    check(d.instants === 24 && d.vertices === meta.vertices, `${label}: dump holds 24 instants of ${d.vertices} vertices`);
    // instants t_k = k·D/23
    let tOk = true;
    for (let k = 0; k < 24; k++) tOk &&= Math.abs(d.times[k] - k * info.duration_s / 23) < 1e-5;
    check(tOk, `${label}: instants evenly spaced over ${info.duration_s.toFixed(3)} s, both ends`);

    const gltf = await parse(stripTextures(new Uint8Array(readFileSync(file))));
    const assoc = gltf.parser.associations;
    const clip = gltf.animations.find((a) => a.name === info.clip);
    if (!clip) throw new Error(`three.js has no clip ${info.clip}`);
    // (node, primitive) → SkinnedMesh
    const byKey = new Map();
    gltf.scene.traverse((o) => {
      if (!o.isSkinnedMesh) return;
      const a = assoc.get(o) || {};
      const node = a.nodes !== undefined ? a.nodes : (assoc.get(o.parent) || {}).nodes;
      byKey.set(`${node}/${a.primitives ?? 0}`, o);
    });
    const mixer = new THREE.AnimationMixer(gltf.scene);
    const action = mixer.clipAction(clip);
    action.setLoop(THREE.LoopOnce); // t = D must be the last pose, not a wrap to 0
    action.clampWhenFinished = true;
    action.play();
    let maxErr = 0, missing = 0;
    const v = new THREE.Vector3();
    for (let k = 0; k < d.instants; k++) {
      mixer.setTime(d.times[k]);
      gltf.scene.updateMatrixWorld(true);
      for (const r of d.rows) {
        const mesh = byKey.get(`${r.node}/${r.primitive}`);
        if (!mesh) { missing++; continue; }
        for (let i = 0; i < r.count; i++) {
          mesh.getVertexPosition(i, v).applyMatrix4(mesh.matrixWorld);
          const o = (k * d.vertices + r.offset + i) * 3;
          maxErr = Math.max(maxErr, Math.abs(v.x - d.pos[o]), Math.abs(v.y - d.pos[o + 1]), Math.abs(v.z - d.pos[o + 2]));
        }
      }
    }
    // The comparison means something only if the clip moves the skin.
    let moved = 0;
    for (let i = 0; i < d.vertices * 3; i++) moved = Math.max(moved, Math.abs(d.pos[12 * d.vertices * 3 + i] - d.pos[i]));
    check(moved > 0.01 * info.height * info.world_scale, `${label}: the clip moves the skin (${(moved / (info.height * info.world_scale)).toFixed(3)} H)`);
    check(missing === 0, `${label}: every skinned primitive found in three.js (${d.rows.length})`);
    const scaleH = info.height * info.world_scale; // H in world units
    const rel = maxErr / scaleH;
    check(rel <= TOL_H, `${label}: max |three.js - tailbone| = ${rel.toExponential(2)} H (limit ${TOL_H} H)`);
  } catch (e) {
    check(false, `${label}: ${e.message}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
