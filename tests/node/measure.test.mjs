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
// Then the stretch figures themselves (SPEC C, docs/measure.md), recounted
// from three.js's skinned positions alone: the edges are every unique pair of
// a triangle's vertices in three.js's own index buffers (model vertex order:
// the dump's rows), the bind lengths from three.js's POSITION attribute,
// edges shorter than 1e-6 H left out, lengths divided by a world scale that
// three.js's skeleton gives (median over the bones of cbrt|det(matrixWorld ·
// boneInverse)| in the stored pose), every sample kept and sorted (nearest
// rank), torn strictly above 1.5 or below 0.67. Each group's edges and
// samples must equal `tailbone measure --json`'s, p95/p99 within 2e-4
// (half a histogram bin, 5e-5, plus three.js against tailbone), min/max
// within 1e-4 relative plus what the two skins' difference can move a ratio
// of that edge (2·√3 × the largest coordinate difference / its bind length),
// and the torn count within the samples the recount finds that close to a
// threshold. The corpus humanoids have no tail (all
// body); the synthetic tail_leg is measured with the truth's tail vertices
// (`--tail-mask`), so its tail, body and seam groups are all recounted.
//
// Env: TB_CLI (tailbone binary), TB_SHARED_DIR (../shared), TB_TMP (scratch).
// Exit 0 pass, 77 skip (no input files), 1 fail.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

// Cases: [file, clip name as `tailbone measure --clip` takes it, tail mask file or null].
const cases = [];
for (const [rel, clip] of [['clips/Xbot_agree_run_walk.glb', 'walk'],
                           ['clips/Xbot_agree_run_walk.glb', 'agree'],
                           ['clips/threejs_Soldier_rexport.glb', 'Walk'],
                           ['clips/threejs_Soldier_rexport.glb', 'Run'],
                           ['reference/khronos_Fox.glb', 'Walk']]) {
  const f = corpusFile(rel);
  if (f) cases.push([f, clip, null]);
}
// Synthetic characters make the check independent of ../shared.
if (cli) {
  try {
    const list = execFileSync(cli, ['synth', '--list'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    if (/tail_leg/.test(list)) {
      mkdirSync(tmp, { recursive: true });
      const f = join(tmp, 'measure_node_tail_leg.glb');
      const tf = join(tmp, 'measure_node_tail_leg.json'), mf = join(tmp, 'measure_node_tail_leg.mask');
      execFileSync(cli, ['synth', '--variant', 'tail_leg', '-o', f, '--truth', tf], { stdio: 'ignore' });
      const truth = JSON.parse(readFileSync(tf, 'utf8'));
      const tailV = truth.appendages.filter((a) => a.kind === 'tail').flatMap((a) => a.vertices);
      writeFileSync(mf, tailV.join(' '));
      cases.push([f, 'Walk', mf]);
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

// SPEC C's figures recounted from three.js's positions (see the top).
// posErr: the largest |three.js - tailbone| coordinate (world units), which
// moves a sample of an edge of bind length len by up to 2·√3·posErr / (scale·len).
function stretchOracle(label, info, d, byKey, pos, worldScale, maskFile, posErr) {
  check(Math.abs(worldScale - info.world_scale) <= 1e-5 * worldScale,
    `${label}: world scale from three.js's skeleton ${worldScale.toPrecision(6)} = tailbone's ${info.world_scale}`);
  const H = info.height;
  const inTail = new Uint8Array(d.vertices);
  if (maskFile) for (const t of readFileSync(maskFile, 'utf8').trim().split(/\s+/)) inTail[Number(t)] = 1;
  // edges: model vertex indices (the dump's row offset + three.js's index)
  const keys = new Set(), bindPos = new Float64Array(d.vertices * 3);
  for (const r of d.rows) {
    const g = byKey.get(`${r.node}/${r.primitive}`).geometry, p = g.attributes.position;
    for (let i = 0; i < r.count; i++) {
      bindPos[(r.offset + i) * 3] = p.getX(i); bindPos[(r.offset + i) * 3 + 1] = p.getY(i); bindPos[(r.offset + i) * 3 + 2] = p.getZ(i);
    }
    const idx = g.index ? g.index.array : null, n = idx ? idx.length : p.count;
    for (let t = 0; t + 2 < n; t += 3) {
      for (let k = 0; k < 3; k++) {
        let a = r.offset + (idx ? idx[t + k] : t + k), b = r.offset + (idx ? idx[t + (k + 1) % 3] : t + (k + 1) % 3);
        if (a === b) continue;
        if (a > b) [a, b] = [b, a];
        keys.add(a * 4294967296 + b);
      }
    }
  }
  const dist = (P, a, b) => Math.hypot(P[a * 3] - P[b * 3], P[a * 3 + 1] - P[b * 3 + 1], P[a * 3 + 2] - P[b * 3 + 2]);
  const groups = { tail: [], body: [], seam: [] };
  for (const key of keys) {
    const a = Math.floor(key / 4294967296), b = key % 4294967296;
    const len = dist(bindPos, a, b);
    if (len < 1e-6 * H) continue;
    groups[inTail[a] && inTail[b] ? 'tail' : !inTail[a] && !inTail[b] ? 'body' : 'seam'].push([a, b, len]);
  }
  for (const [name, edges] of Object.entries(groups)) {
    const want = info[name];
    if (!edges.length) {
      check(!want || !want.edges, `${label}: ${name}: no edges in three.js's triangles, none in tailbone's report`);
      continue;
    }
    const samples = new Float64Array(edges.length * d.instants);
    let n = 0, torn = 0, near = 0, minLen = 0, maxLen = 0;
    let lo = Infinity, hi = -Infinity;
    const slack = (len) => 2 * Math.sqrt(3) * posErr / worldScale / len;
    for (let k = 0; k < d.instants; k++) {
      const P = pos.subarray(k * d.vertices * 3, (k + 1) * d.vertices * 3);
      for (const [a, b, len] of edges) {
        const r = dist(P, a, b) / worldScale / len;
        samples[n++] = r;
        if (r < lo) { lo = r; minLen = len; }
        if (r > hi) { hi = r; maxLen = len; }
        if (r > 1.5 || r < 0.67) torn++;
        const band = 1e-4 + slack(len);
        if (Math.abs(r - 1.5) < band || Math.abs(r - 0.67) < band) near++;
      }
    }
    samples.sort();
    const rank = (q) => samples[Math.ceil(q * n) - 1];
    const fig = { p95: rank(0.95), p99: rank(0.99), min: samples[0], max: samples[n - 1] };
    const got = want || {};
    const diff = [];
    if (got.edges !== edges.length || got.samples !== n) diff.push(`edges/samples ${got.edges}/${got.samples} vs ${edges.length}/${n}`);
    for (const q of ['p95', 'p99']) if (!(Math.abs(got[q] - fig[q]) <= 2e-4)) diff.push(`${q} ${got[q]} vs ${fig[q].toFixed(5)}`);
    for (const [q, len] of [['min', minLen], ['max', maxLen]]) {
      if (!(Math.abs(got[q] - fig[q]) <= 1e-4 * fig[q] + slack(len))) diff.push(`${q} ${got[q]} vs ${fig[q].toFixed(6)} (±${(1e-4 * fig[q] + slack(len)).toExponential(1)})`);
    }
    if (!(Math.abs(got.torn_samples - torn) <= near)) diff.push(`torn ${got.torn_samples} vs ${torn} (±${near})`);
    check(diff.length === 0, `${label}: ${name} stretch recounted from three.js: ${edges.length} edges, p95 ${fig.p95.toFixed(3)}, ` +
      `p99 ${fig.p99.toFixed(3)}, max ${fig.max.toFixed(3)}, torn ${torn} = tailbone's` + (diff.length ? ` — differ: ${diff.join('; ')}` : ''));
  }
}

const parse = (ab) => new Promise((resolve, reject) => new GLTFLoader().parse(ab, '', resolve, reject));

for (const [file, clipName, maskFile] of cases) {
  const label = `${file.split('/').pop()} ${clipName}`;
  try {
    const dumpPath = join(tmp, `measure_node_${process.pid}.bin`);
    const meta = JSON.parse(execFileSync(cli, ['measure', file, '--clip', clipName, '--json', '--no-spring',
                                               '--dump-positions', dumpPath,
                                               ...(maskFile ? ['--tail-mask', maskFile] : [])], { encoding: 'utf8' }));
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
    // the world scale from three.js's skeleton in the stored pose (before the mixer)
    gltf.scene.updateMatrixWorld(true);
    const scales = [];
    const m4 = new THREE.Matrix4();
    for (const mesh of byKey.values()) {
      mesh.skeleton.bones.forEach((b, i) => {
        const x = Math.cbrt(Math.abs(m4.multiplyMatrices(b.matrixWorld, mesh.skeleton.boneInverses[i]).determinant()));
        if (Number.isFinite(x) && x > 0) scales.push(x);
      });
      break; // one skin: the model's merged skins share their joints' poses
    }
    scales.sort((a, b) => a - b);
    const ns = scales.length;
    const worldScale = ns % 2 ? scales[ns >> 1] : 0.5 * (scales[ns / 2 - 1] + scales[ns / 2]);
    const threePos = new Float64Array(d.instants * d.vertices * 3);
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
          threePos[o] = v.x; threePos[o + 1] = v.y; threePos[o + 2] = v.z;
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
    if (maskFile || !(info.tail && info.tail.edges)) stretchOracle(label, info, d, byKey, threePos, worldScale, maskFile, maxErr);
    else console.log(`info ${label}: stretch not recounted (its tail comes from detection, which the recount does not repeat)`);
  } catch (e) {
    check(false, `${label}: ${e.message}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
