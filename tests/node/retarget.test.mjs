// `tailbone retarget` judged by three.js (SPEC D): the clips of
// threejs_Soldier_rexport.glb and Xbot_agree_run_walk.glb are transferred
// onto both corpus characters, then source and result are played in three.js
// (GLTFLoader + AnimationMixer.setTime) at 24 instants per clip and compared
// in world space:
//  - limbs: direction of UpLeg→Leg, Leg→Foot, Arm→ForeArm, ForeArm→Hand (both
//    sides) against the source's, the source turned by the yaw between the
//    two skeletons' own bind geometry (thighs × up; Soldier faces −Z, the
//    characters +Z), never by the facing the report gives. No limb may flip.
//  - feet: the lowest foot joint (Foot / ToeBase) above its bind height,
//    against the source's scaled by the ratio of the two skeletons' bind leg
//    lengths (thigh + shin), not the report's leg_ratio: the feet stay on the
//    ground where the source's do.
//  - the report's placement ignores the tail; the pelvis is never lifted for
//    the (detected) tail.
// Env: TB_CLI, TB_SHARED_DIR, TB_TMP. Exit 0 pass, 77 skip, 1 fail.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { stripTextures } from './gltf_util.mjs';
import { corpusFile, corpusDir } from './corpus.mjs';

const cli = process.env.TB_CLI;
const shared = process.env.TB_SHARED_DIR;
const tmp = process.env.TB_TMP || '/tmp';
if (globalThis.self === undefined) globalThis.self = globalThis; // GLTFLoader reads self.URL

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { passed++; console.log(`ok   ${what}`); }
  else { failed++; console.log(`FAIL ${what}`); }
}

const libs = ['clips/threejs_Soldier_rexport.glb', 'clips/Xbot_agree_run_walk.glb'].map(corpusFile);
const chars = ['characters/banter_Wolf.glb', 'characters/banter_Bone_Demon.glb'].map(corpusFile);
if (!cli || !existsSync(cli) || ![...libs, ...chars].every((f) => f)) {
  console.log('skip: needs TB_CLI and ../shared/corpus (clips and characters)');
  console.log('0 passed, 0 failed');
  process.exit(77);
}
mkdirSync(tmp, { recursive: true });


function load(path) {
  return new Promise((resolve, reject) =>
    new GLTFLoader().parse(stripTextures(readFileSync(path)), '', resolve, reject));
}

// Bones by humanoid role: three.js strips ':' from node names
// ("mixamorig:Hips" → "mixamorigHips").
function bonesByRole(gltf) {
  const map = {};
  gltf.scene.traverse((o) => {
    if (!o.isBone) return;
    const role = o.name.replace(/^mixamorig\d*:?/, '');
    if (!(role in map)) map[role] = o;
  });
  return map;
}

const LIMBS = [['LeftUpLeg', 'LeftLeg'], ['LeftLeg', 'LeftFoot'], ['RightUpLeg', 'RightLeg'], ['RightLeg', 'RightFoot'],
  ['LeftArm', 'LeftForeArm'], ['LeftForeArm', 'LeftHand'], ['RightArm', 'RightForeArm'], ['RightForeArm', 'RightHand']];
const FEET = ['LeftFoot', 'RightFoot', 'LeftToeBase', 'RightToeBase'];
const v = () => new THREE.Vector3();

function lowestFoot(bones) {
  let lo = Infinity;
  for (const n of FEET) lo = Math.min(lo, bones[n].getWorldPosition(v()).y);
  return lo;
}

// Bind heights of the feet from the inverse bind matrices (world = IBM^-1
// for these files, whose IBMs include the armature).
function bindLowestFoot(gltf, bones) {
  let lo = Infinity;
  gltf.scene.traverse((o) => {
    if (!o.isSkinnedMesh) return;
    o.skeleton.bones.forEach((b, i) => {
      if (FEET.some((n) => bones[n] === b)) {
        const m = o.skeleton.boneInverses[i].clone().invert();
        lo = Math.min(lo, new THREE.Vector3().setFromMatrixPosition(m).y);
      }
    });
  });
  return lo;
}

// Bind world positions of the named bones (IBM^-1, as above).
function bindPositions(gltf, bones, names) {
  const pos = {};
  gltf.scene.traverse((o) => {
    if (!o.isSkinnedMesh) return;
    o.skeleton.bones.forEach((b, i) => {
      for (const n of names)
        if (bones[n] === b && !(n in pos))
          pos[n] = new THREE.Vector3().setFromMatrixPosition(o.skeleton.boneInverses[i].clone().invert());
    });
  });
  return pos;
}

const LEG = ['LeftUpLeg', 'LeftLeg', 'LeftFoot', 'RightUpLeg', 'RightLeg', 'RightFoot'];

// Heading (about +Y) and leg length of a skeleton from its bind geometry:
// forward = (left thigh − right thigh) × up; leg = thigh + shin, both sides.
function bindFrame(gltf, bones) {
  const p = bindPositions(gltf, bones, LEG);
  const left = p.LeftUpLeg.clone().sub(p.RightUpLeg);
  const heading = Math.atan2(-left.z, left.x);
  const leg = 0.5 * (p.LeftUpLeg.distanceTo(p.LeftLeg) + p.LeftLeg.distanceTo(p.LeftFoot) +
                     p.RightUpLeg.distanceTo(p.RightLeg) + p.RightLeg.distanceTo(p.RightFoot));
  return { heading, leg };
}

function sampler(gltf) {
  const mixer = new THREE.AnimationMixer(gltf.scene);
  return (clip, t) => {
    mixer.stopAllAction();
    mixer.clipAction(clip).play();
    mixer.setTime(t);
    gltf.scene.updateMatrixWorld(true);
  };
}

const sources = await Promise.all(libs.map(load));
const summary = [];
for (const ch of chars) {
  const name = ch.split('/').pop().replace('.glb', '');
  const out = join(tmp, `retarget_node_${name}.glb`), rep = join(tmp, `retarget_node_${name}.json`);
  execFileSync(cli, ['retarget', ch, '--clips', libs.join(','), '-o', out, '--report', rep, '-q']);
  const report = JSON.parse(readFileSync(rep, 'utf8'));
  const tgt = await load(out);
  const tb = bonesByRole(tgt), play = sampler(tgt);
  const tgtBind = bindLowestFoot(tgt, tb);
  const tgtFrame = bindFrame(tgt, tb);
  check(tgt.animations.length === 7, `${name}: 7 clips appended (got ${tgt.animations.length})`);
  const pl = report.placement;
  check(Array.isArray(report.detected_tails) && report.detected_tails.length >= 1,
    `${name}: tail detected for grounding (${report.detected_tails.map((t) => t.vertices).join(',')} vertices)`);
  check(Math.abs(pl.ground_offset_y + pl.body_min_y) < 1e-6 && pl.frame_min[2] <= pl.frame_max[2],
    `${name}: placement ground offset ${pl.ground_offset_y.toFixed(4)} (body lowest, tail ignored)`);
  for (const [li, src] of sources.entries()) {
    const sb = bonesByRole(src), splay = sampler(src);
    const srcBind = bindLowestFoot(src, sb);
    const srcFrame = bindFrame(src, sb);
    let yaw = tgtFrame.heading - srcFrame.heading;
    while (yaw > Math.PI) yaw -= 2 * Math.PI;
    while (yaw < -Math.PI) yaw += 2 * Math.PI;
    const ratio = tgtFrame.leg / srcFrame.leg;
    const rot = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(0, 1, 0), yaw);
    for (const sclip of src.animations) {
      const tclip = tgt.animations.find((a) => a.name === sclip.name);
      const r = report.clips.find((c) => c.name === sclip.name && c.source === libs[li]);
      if (!tclip || !r) { check(false, `${name}: clip ${sclip.name} present`); continue; }
      // (the report's own facing_deg and leg_ratio are printed, never used)
      let angSum = 0, angN = 0, angMax = 0, footSum = 0, footMax = 0, footN = 0, nan = false;
      let tLow = Infinity, sLow = Infinity;
      const N = 24;
      for (let i = 0; i < N; i++) {
        const t = sclip.duration > 0 ? (sclip.duration * i) / N : 0;
        splay(sclip, t);
        play(tclip, t);
        for (const [a, b] of LIMBS) {
          const ds = sb[b].getWorldPosition(v()).sub(sb[a].getWorldPosition(v())).applyQuaternion(rot);
          const dt = tb[b].getWorldPosition(v()).sub(tb[a].getWorldPosition(v()));
          const ang = (ds.angleTo(dt) * 180) / Math.PI;
          if (!Number.isFinite(ang)) nan = true;
          angSum += ang; angN++; angMax = Math.max(angMax, ang);
        }
        // foot height above bind, source scaled into target units
        const th = lowestFoot(tb) - tgtBind, sh = (lowestFoot(sb) - srcBind) * ratio;
        const e = Math.abs(th - sh);
        footSum += e; footN++; footMax = Math.max(footMax, e);
        tLow = Math.min(tLow, th); sLow = Math.min(sLow, sh);
      }
      const row = { character: name, clip: sclip.name, limb_mean_deg: angSum / angN, limb_max_deg: angMax,
        foot_err_mean_cm: (100 * footSum) / footN, foot_err_max_cm: (100 * footMax), foot_low_cm: 100 * tLow,
        src_foot_low_cm: 100 * sLow, lift_max_cm: 100 * r.grounding.lift_max,
        yaw_deg: (yaw * 180) / Math.PI, reported_facing_deg: r.facing_deg, leg_ratio: ratio, reported_leg_ratio: r.leg_ratio };
      summary.push(row);
      check(!nan, `${name} ${sclip.name}: finite poses`);
      check(angSum / angN < 3 && angMax < 20,
        `${name} ${sclip.name}: limbs follow the source (mean ${(angSum / angN).toFixed(2)} deg, max ${angMax.toFixed(2)} deg)`);
      check(footSum / footN < 0.03 && footMax < 0.06,
        `${name} ${sclip.name}: feet on the ground like the source's (|Δ| mean ${row.foot_err_mean_cm.toFixed(2)} cm, ` +
        `max ${row.foot_err_max_cm.toFixed(2)} cm; lowest ${row.foot_low_cm.toFixed(2)} vs source ${row.src_foot_low_cm.toFixed(2)} cm)`);
      check(r.grounding.lift_max === 0,
        `${name} ${sclip.name}: no pelvis lift (tail excluded; got ${(100 * r.grounding.lift_max).toFixed(2)} cm)`);
    }
  }
}
console.log('\ncharacter           clip                               limb mean/max deg   foot err mean/max cm   foot low cm (src)   yaw / leg ratio from the skeletons (reported)');
for (const s of summary)
  console.log(`${s.character.padEnd(19)} ${s.clip.padEnd(34)} ${s.limb_mean_deg.toFixed(2).padStart(6)} / ${s.limb_max_deg.toFixed(2).padStart(6)}` +
    `     ${s.foot_err_mean_cm.toFixed(2).padStart(6)} / ${s.foot_err_max_cm.toFixed(2).padStart(6)}      ${s.foot_low_cm.toFixed(2)} (${s.src_foot_low_cm.toFixed(2)})` +
    `   ${s.yaw_deg.toFixed(1)}° / ${s.leg_ratio.toFixed(3)} (${s.reported_facing_deg.toFixed(1)}° / ${s.reported_leg_ratio.toFixed(3)})`);
// the table docs/retarget.md shows (scripts/figures.py reads it from here)
if (process.env.TB_SUMMARY_JSON) writeFileSync(process.env.TB_SUMMARY_JSON, JSON.stringify(summary, null, 1));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
