// `tailbone fix` end to end in a real client: the output passes the Khronos
// validator, loads in three.js (GLTFLoader), and every clip played by an
// AnimationMixer moves the Tail_* bones, keeps the skinned tail's stretch
// under the body's, and closes its loop (first and last tail poses match).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as THREE from 'three';
import validator from 'gltf-validator';
import { stripTextures } from './gltf_util.mjs';
import { loadGltf, skinnedMeshes } from './synth_lib.mjs';
import { corpusFile, corpusDir } from './corpus.mjs';

const cli = process.env.TB_CLI;
const tmp = fs.mkdtempSync(path.join(process.env.TB_TMP || '/tmp', 'fix-'));
let passed = 0, failed = 0;
const ok = (cond, msg) => { if (cond) { passed++; console.log('ok   ' + msg); } else { failed++; console.log('FAIL ' + msg); } };

function run(args) { return execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }); }

// Skinned world positions of every vertex of every skinned mesh.
function skinned(meshes) {
  const out = [];
  const v = new THREE.Vector3();
  for (const m of meshes) {
    m.skeleton.update();
    const n = m.geometry.attributes.position.count;
    const a = new Float32Array(n * 3);
    for (let i = 0; i < n; i++) { m.getVertexPosition(i, v); v.applyMatrix4(m.matrixWorld); a.set([v.x, v.y, v.z], i * 3); }
    out.push(a);
  }
  return out;
}

function edges(mesh) {
  const idx = mesh.geometry.index.array, set = new Set(), list = [];
  for (let t = 0; t < idx.length; t += 3)
    for (let k = 0; k < 3; k++) {
      const a = idx[t + k], b = idx[t + (k + 1) % 3], key = a < b ? a * 1e7 + b : b * 1e7 + a;
      if (!set.has(key)) { set.add(key); list.push([a, b]); }
    }
  return list;
}

// A vertex belongs to the tail when most of its weight is on Tail_* bones.
function tailMask(mesh) {
  const si = mesh.geometry.attributes.skinIndex, sw = mesh.geometry.attributes.skinWeight, bones = mesh.skeleton.bones;
  const mask = new Uint8Array(si.count);
  for (let i = 0; i < si.count; i++) {
    let w = 0;
    for (let k = 0; k < 4; k++) if (/^(.*:)?Tail[A-Z]?_/.test(bones[si.getComponent(i, k)].name)) w += sw.getComponent(i, k);
    mask[i] = w >= 0.5 ? 1 : 0;
  }
  return mask;
}

function p99(values) { if (!values.length) return NaN; values.sort((a, b) => a - b); return values[Math.min(values.length - 1, Math.ceil(0.99 * values.length) - 1)]; }

// The vertices the repair reweighted (issue 13's honest groups, as
// test_fix_bar marks them): any bone's weight, by bone name, differing
// between the input's mesh and the output's by more than two 8-bit steps.
function repairedMasks(inMeshes, outMeshes) {
  const byName = (m, i) => {
    const si = m.geometry.attributes.skinIndex, sw = m.geometry.attributes.skinWeight, w = new Map();
    for (let k = 0; k < 4; k++) {
      const x = sw.getComponent(i, k);
      if (x > 0) { const n = m.skeleton.bones[si.getComponent(i, k)].name; w.set(n, (w.get(n) || 0) + x); }
    }
    return w;
  };
  return outMeshes.map((mo, mi) => {
    const n = mo.geometry.attributes.position.count, mask = new Uint8Array(n), mIn = inMeshes[mi];
    for (let i = 0; i < n; i++) {
      const a = byName(mIn, i), b = byName(mo, i);
      for (const name of new Set([...a.keys(), ...b.keys()]))
        if (Math.abs((a.get(name) || 0) - (b.get(name) || 0)) > 2 / 255) mask[i] = 1;
    }
    return mask;
  });
}

async function checkFile(label, file, clips, { stretch = true, torn0 = false, seam0 = false, repairedFrom = null } = {}) {
  const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), { maxIssues: 0 });
  ok(report.issues.numErrors === 0, `${label}: validator reports ${report.issues.numErrors} errors`);
  const gltf = await loadGltf(Buffer.from(stripTextures(fs.readFileSync(file))));
  const meshes = skinnedMeshes(gltf);
  const tailBones = [];
  gltf.scene.traverse((o) => { if (o.isBone && /^(.*:)?Tail[A-Z]?_\d+$/.test(o.name)) tailBones.push(o); });
  ok(tailBones.length >= 3, `${label}: ${tailBones.length} Tail_* bones`);
  const bindPos = meshes.map((m) => m.geometry.attributes.position.array);
  const masks = meshes.map(tailMask), edgeLists = meshes.map(edges);
  let repaired = null;
  if (repairedFrom) {
    const inMeshes = skinnedMeshes(await loadGltf(Buffer.from(stripTextures(fs.readFileSync(repairedFrom)))));
    ok(inMeshes.length === meshes.length, `${label}: the input's ${inMeshes.length} skinned meshes, the output's ${meshes.length}`);
    repaired = repairedMasks(inMeshes, meshes);
  }
  // World units per bind unit: the median edge ratio of the rest pose (a
  // centimetre mesh under a 0.01 armature reads 0.01 everywhere).
  gltf.scene.updateMatrixWorld(true);
  const rest = skinned(meshes), ratios = [];
  meshes.forEach((m, mi) => {
    const P = rest[mi], B = bindPos[mi];
    for (const [a, b] of edgeLists[mi]) {
      const l0 = Math.hypot(B[a * 3] - B[b * 3], B[a * 3 + 1] - B[b * 3 + 1], B[a * 3 + 2] - B[b * 3 + 2]);
      if (l0 > 1e-9) ratios.push(Math.hypot(P[a * 3] - P[b * 3], P[a * 3 + 1] - P[b * 3 + 1], P[a * 3 + 2] - P[b * 3 + 2]) / l0);
    }
  });
  ratios.sort((a, b) => a - b);
  const scale = ratios[ratios.length >> 1];
  for (const name of clips) {
    const clip = gltf.animations.find((a) => a.name === name);
    if (!clip) { ok(false, `${label}: clip ${name} present`); continue; }
    const tailTracks = clip.tracks.filter((t) => /Tail[A-Z]?_\d+\.quaternion$/.test(t.name));
    ok(tailTracks.length === tailBones.length, `${label} ${name}: ${tailTracks.length} baked tail tracks`);
    const mixer = new THREE.AnimationMixer(gltf.scene);
    mixer.clipAction(clip).play();
    const tail = [], body = [], seam = [], honest = [];
    let swing = 0;
    const q0 = [];
    for (let k = 0; k < 24; k++) {
      const t = (k * clip.duration) / 23;
      mixer.setTime(t);
      gltf.scene.updateMatrixWorld(true);
      tailBones.forEach((b, i) => {
        if (k === 0) q0[i] = b.quaternion.clone();
        swing = Math.max(swing, b.quaternion.angleTo(q0[i]));
      });
      const pos = skinned(meshes);
      meshes.forEach((m, mi) => {
        const P = pos[mi], B = bindPos[mi], M = masks[mi];
        for (const [a, b] of edgeLists[mi]) {
          const l0 = Math.hypot(B[a * 3] - B[b * 3], B[a * 3 + 1] - B[b * 3 + 1], B[a * 3 + 2] - B[b * 3 + 2]);
          if (l0 < 1e-9) continue;
          const l1 = Math.hypot(P[a * 3] - P[b * 3], P[a * 3 + 1] - P[b * 3 + 1], P[a * 3 + 2] - P[b * 3 + 2]);
          const r = l1 / (l0 * scale);
          if (M[a] && M[b]) tail.push(r); else if (!M[a] && !M[b]) body.push(r); else seam.push(r);
          if (repaired && (repaired[mi][a] || repaired[mi][b])) honest.push(r);
        }
      });
    }
    if (repaired) {
      const h = honest.filter((r) => r > 1.5 || r < 0.67).length;
      ok(h === 0, `${label} ${name}: ${h} torn samples of ${honest.length} on edges the repair touched (max ${Math.max(...honest).toFixed(3)})`);
    }
    const torn = tail.filter((r) => r > 1.5 || r < 0.67).length;
    const seamTorn = seam.filter((r) => r > 1.5 || r < 0.67).length;
    if (seam0) ok(seamTorn === 0, `${label} ${name}: ${seamTorn} torn samples of ${seam.length} where the tail meets the body`);
    else if (seam.length) console.log(`info ${label} ${name}: seam to the body p99 ${p99(seam.slice()).toFixed(3)}, ${seamTorn} torn of ${seam.length}`);
    const tp = p99(tail), bp = p99(body);
    ok(swing > (5 * Math.PI) / 180, `${label} ${name}: tail bones swing ${(swing * 180 / Math.PI).toFixed(1)}°`);
    if (stretch) {
      // 1e-4: float32 skinning noise when both sides are rigid pieces (1.0000x)
      ok(tp <= bp + 1e-4, `${label} ${name}: tail p99 ${tp.toFixed(4)} <= body p99 ${bp.toFixed(4)}`);
      ok(torn === 0, `${label} ${name}: ${torn} torn tail samples of ${tail.length}`);
    } else {
      console.log(`info ${label} ${name}: tail p99 ${tp.toFixed(3)}, body p99 ${bp.toFixed(3)} (body is rigid pieces; not asserted, see docs/fix.md)`);
      if (torn0) ok(torn === 0, `${label} ${name}: ${torn} torn tail samples of ${tail.length}`);
      else console.log(`info ${label} ${name}: ${torn} torn tail samples of ${tail.length}`);
    }
    // Loop closure. A clip whose last key repeats its first pose must end with
    // the tail where it started. Many cycles instead stop one frame before the
    // start (the player wraps); then the tail's step across the wrap must be
    // an ordinary frame step, not a jump.
    const poseAt = (t) => { mixer.setTime(t); gltf.scene.updateMatrixWorld(true); };
    const grab = (list) => list.map((b) => b.quaternion.clone());
    const bodyBones = [];
    gltf.scene.traverse((o) => { if (o.isBone && !/Tail/.test(o.name)) bodyBones.push(o); });
    poseAt(0); const tail0 = grab(tailBones), body0 = grab(bodyBones);
    poseAt(clip.duration - 1e-6); const tailEnd = grab(tailBones), bodyEnd = grab(bodyBones);
    const maxAngle = (a, b) => Math.max(...a.map((q, i) => q.angleTo(b[i])));
    const closure = maxAngle(tail0, tailEnd), deg = Math.PI / 180;
    if (maxAngle(body0, bodyEnd) < 2 * deg) {
      ok(closure <= 0.5 * deg, `${label} ${name}: loop closes (${(closure / deg).toFixed(2)}°)`);
    } else {
      let step = 0, prev = tail0;
      for (let t = 1 / 30; t < clip.duration; t += 1 / 30) { poseAt(t); const cur = grab(tailBones); step = Math.max(step, maxAngle(prev, cur)); prev = cur; }
      ok(closure <= step + 0.5 * deg,
         `${label} ${name}: wrap from the last key is a frame step (${(closure / deg).toFixed(2)}° vs largest step ${(step / deg).toFixed(2)}°)`);
    }
  }
}

// Synthetic fox: tail weighted to the left shin and both thighs.
const broken = path.join(tmp, 'tail_leg.glb'), fixed = path.join(tmp, 'tail_leg.fixed.glb');
run(['synth', '--variant', 'tail_leg', '-o', broken]);
run(['fix', broken, '-o', fixed, '-q']);
await checkFile('synthetic tail_leg', fixed, ['Walk', 'Sprint']);

// Blend-zone search: the SPEC's zone (raised by the tail's geometry) first;
// when a baked clip tears, the same baked file is re-weighted with wider
// zones and the least torn kept (docs/fix.md).
{
  const rep = path.join(tmp, 'tail_leg.report.json'), out = path.join(tmp, 'tail_leg.all.glb');
  run(['fix', broken, '-o', out, '--report', rep, '-q']);
  const r = JSON.parse(fs.readFileSync(rep, 'utf8'));
  const chain = r.appendages.find((a) => a.decision === 'chain');
  const search = r.blend_zone_search || [];
  const tornClips = r.stretch.filter((s) => s.tail.torn > 0).length;
  ok(search.length >= 2 && search[0].blend_zone >= 0.25 && search[0].torn_clips > 0 && r.full_reruns === 0,
     `tail_leg, all clips: the SPEC zone raised by the geometry (${search[0] && search[0].blend_zone}) is tried first ` +
     `and tears in ${search[0] && search[0].torn_clips} clip(s); no attempt reruns the job`);
  const last = search[search.length - 1] || {};
  ok(chain.blend_zone === last.blend_zone && last.torn_clips === tornClips,
     `tail_leg, all clips: weights use zone ${chain.blend_zone}, the last tried (${tornClips} torn clip(s) in the result)`);
  ok(search.every((z, i) => i === 0 || z.worst_torn < search[i - 1].worst_torn),
     `tail_leg, all clips: each wider zone tears less (${search.map((z) => (100 * z.worst_torn).toFixed(2) + '%').join(' > ')})`);
  const pinned = path.join(tmp, 'tail_leg.pinned.json');
  run(['fix', broken, '-o', path.join(tmp, 'tail_leg.pinned.glb'), '--blend-zone', '0.25', '--report', pinned, '-q']);
  const p = JSON.parse(fs.readFileSync(pinned, 'utf8'));
  ok(!p.blend_zone_search && p.appendages.find((a) => a.decision === 'chain').blend_zone === 0.25,
     'tail_leg --blend-zone 0.25: the zone asked for, no search');
}

// A tail welded into the body: the tail's first half segment blends from the
// collar's weights, so the seam where it meets the body stops tearing on Walk.
{
  const tw = path.join(tmp, 'tail_welded.glb'), twFixed = path.join(tmp, 'tail_welded.fixed.glb');
  run(['synth', '--variant', 'tail_welded', '-o', tw]);
  const seamTorn = (extra) => {
    const rep = path.join(tmp, 'tail_welded.report.json');
    run(['fix', tw, '-o', twFixed, '--only', 'Walk,Sprint', '--report', rep, '-q', ...extra]);
    const r = JSON.parse(fs.readFileSync(rep, 'utf8'));
    return Object.fromEntries(r.stretch.map((s) => [s.clip, s.seam ? s.seam.torn : NaN]));
  };
  const none = seamTorn(['--collar-band', '0']), blended = seamTorn([]);
  ok(none.Walk > 0 && blended.Walk === 0 && blended.Sprint < none.Sprint,
     `tail_welded: seam torn Walk ${(100 * none.Walk).toFixed(1)}% -> ${(100 * blended.Walk).toFixed(1)}%, ` +
     `Sprint ${(100 * none.Sprint).toFixed(1)}% -> ${(100 * blended.Sprint).toFixed(1)}% with the collar blend`);
  await checkFile('synthetic tail_welded', twFixed, ['Walk'], { seam0: true });
}

// A low-poly segmented character: body in rigid pieces (body stretch 1.00),
// tail of 8 separate pieces on Hips. One bone per piece keeps every piece
// undeformed while the chain swings them.
const seg = path.join(tmp, 'tail_segmented.glb'), segFixed = path.join(tmp, 'tail_segmented.fixed.glb');
run(['synth', '--variant', 'tail_segmented', '-o', seg]);
run(['fix', seg, '-o', segFixed, '-q']);
await checkFile('synthetic tail_segmented', segFixed, ['Walk', 'Sprint']);

// Issue 13 in three.js: a tail curled 200° in its bind pose (the solver is
// fitted to what its weights carry) and, on the Xbot, a low-poly tail welded
// into the body (two rings per bone: the blend and collar band sized from
// its rings) — nothing torn in the tail or where it meets the body.
{
  const curl = path.join(tmp, 'curl.glb'), curlFixed = path.join(tmp, 'curl.fixed.glb');
  run(['synth', '--onto', 'synth:plain', '--fixture', 'curl_shell_nearest', '-o', curl]);
  run(['fix', curl, '-o', curlFixed, '--only', 'Walk,Sprint,Crouch', '-q']);
  await checkFile('synth:plain curl_shell_nearest', curlFixed, ['Walk', 'Sprint', 'Crouch'], { seam0: true });
}

// The welded bands whose weights are fitted to the poses (docs/fix.md,
// session 18): nothing torn on any edge the repair touched, in three.js.
for (const fx of ['hang_welded_nearest', 'beside_welded_leg']) {
  const src = path.join(tmp, fx + '.glb'), out = path.join(tmp, fx + '.fixed.glb');
  run(['synth', '--onto', 'synth:plain', '--fixture', fx, '-o', src]);
  const rep = path.join(tmp, fx + '.report.json');
  run(['fix', src, '-o', out, '--only', 'Walk,Sprint,Crouch', '--report', rep, '-q']);
  const r = JSON.parse(fs.readFileSync(rep, 'utf8'));
  ok(r.weights_fitted_vertices > 0, `synth:plain ${fx}: band weights fitted to the poses on ${r.weights_fitted_vertices} vertices`);
  await checkFile(`synth:plain ${fx}`, out, ['Walk', 'Sprint', 'Crouch'], { stretch: false, torn0: true, seam0: true, repairedFrom: src });
}

// Real characters with a library's clips transferred first (../shared only).
const shared = process.env.TB_SHARED_DIR;
const corpus = shared && path.join(shared, 'corpus');
const lib = corpusFile('clips/Xbot_agree_run_walk.glb');
const libClips = ['Armature|Armature|walk_Armature', 'Armature|Armature|run_Armature'];
if (lib && fs.existsSync(lib)) {
  const low = path.join(tmp, 'xbot_lowpoly.glb'), lowFixed = path.join(tmp, 'xbot_lowpoly.fixed.glb');
  run(['synth', '--onto', lib, '--fixture', 'back_lowpoly_nearest', '-o', low]);
  run(['fix', low, '-o', lowFixed, '--only', 'walk,run', '-q']);
  // (the Xbot's body barely stretches, p99 1.04: the tail's p99, 1.05, is
  // held to SPEC C's chain row in the C suite, not to the body's here)
  await checkFile('Xbot back_lowpoly_nearest', lowFixed, libClips, { stretch: false, torn0: true, seam0: true });
  // Both are built from rigid pieces, tail included: the default binds each
  // tail piece to one bone, like the body.
  for (const name of ['banter_Wolf', 'banter_Bone_Demon']) {
    const src = corpusFile(`characters/${name}.glb`);
    if (!src) continue;
    const out = path.join(tmp, name + '.fixed.glb');
    run(['fix', src, '-o', out, '--clips', lib, '--only', 'walk,run', '-q']);
    await checkFile(name, out, libClips);
  }
  // The smooth-weight path on the Wolf's coarse tail: blended across whole
  // segments it does not tear (its p99 is above the rigid body's: reported).
  const wolf = corpusFile('characters/banter_Wolf.glb');
  if (wolf) {
    const out = path.join(tmp, 'banter_Wolf.smooth.glb');
    run(['fix', wolf, '-o', out, '--clips', lib, '--only', 'walk,run', '--smooth-pieces', '--blend-zone', '0.5', '-q']);
    await checkFile('banter_Wolf --smooth-pieces --blend-zone 0.5', out, libClips, { stretch: false, torn0: true });
  }
} else {
  console.log('skip corpus characters: ../shared/corpus is absent');
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
