// VRM: a synthetic character made a VRM 1.0 avatar (VRMC_vrm humanoid map
// added), repaired by `tailbone fix` twice — baked, and with --vrm-springs —
// then played in three.js: the baked file by its keys, the springs file by
// the three-vrm runtime (@pixiv/three-vrm, pinned in package-lock.json)
// stepping VRMC_springBone at 60 Hz. The tail tip of the runtime must follow
// the baked tail within the tolerance docs/vrm.md states; VRMC_vrm is kept.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { VRMSpringBoneLoaderPlugin } from '@pixiv/three-vrm';

const cli = process.env.TB_CLI;
fs.mkdirSync(process.env.TB_TMP || '/tmp', { recursive: true }); // absent when run alone
const tmp = fs.mkdtempSync(path.join(process.env.TB_TMP || '/tmp', 'vrm-'));
let passed = 0, failed = 0;
const ok = (cond, msg) => { if (cond) { passed++; console.log('ok   ' + msg); } else { failed++; console.log('FAIL ' + msg); } };
const run = (args) => execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function readGlb(buf) {
  const jl = buf.readUInt32LE(12);
  return { json: JSON.parse(buf.subarray(20, 20 + jl).toString('utf8')), bin: buf.subarray(20 + jl + 8) };
}
function writeGlb(json, bin) {
  let js = Buffer.from(JSON.stringify(json), 'utf8');
  if (js.length % 4) js = Buffer.concat([js, Buffer.alloc(4 - (js.length % 4), 0x20)]);
  const h = Buffer.alloc(12), jh = Buffer.alloc(8), bh = Buffer.alloc(8);
  h.writeUInt32LE(0x46546c67, 0); h.writeUInt32LE(2, 4); h.writeUInt32LE(12 + 8 + js.length + 8 + bin.length, 8);
  jh.writeUInt32LE(js.length, 0); jh.writeUInt32LE(0x4e4f534a, 4);
  bh.writeUInt32LE(bin.length, 0); bh.writeUInt32LE(0x004e4942, 4);
  return Buffer.concat([h, jh, js, bh, bin]);
}

// 1. the avatar: tail_leg with a VRM 1.0 humanoid map from its joint names
run(['synth', '--variant', 'tail_leg', '-o', path.join(tmp, 'char.glb')]);
const { json, bin } = readGlb(fs.readFileSync(path.join(tmp, 'char.glb')));
const vrmNames = { Hips: 'hips', Spine: 'spine', Spine1: 'chest', Spine2: 'upperChest', Neck: 'neck', Head: 'head',
  LeftShoulder: 'leftShoulder', LeftArm: 'leftUpperArm', LeftForeArm: 'leftLowerArm', LeftHand: 'leftHand',
  RightShoulder: 'rightShoulder', RightArm: 'rightUpperArm', RightForeArm: 'rightLowerArm', RightHand: 'rightHand',
  LeftUpLeg: 'leftUpperLeg', LeftLeg: 'leftLowerLeg', LeftFoot: 'leftFoot', LeftToeBase: 'leftToes',
  RightUpLeg: 'rightUpperLeg', RightLeg: 'rightLowerLeg', RightFoot: 'rightFoot', RightToeBase: 'rightToes' };
const humanBones = {};
json.nodes.forEach((n, i) => { const k = (n.name || '').replace(/^.*:/, ''); if (vrmNames[k]) humanBones[vrmNames[k]] = { node: i }; });
json.extensions = Object.assign(json.extensions || {}, {
  VRMC_vrm: { specVersion: '1.0', meta: { name: 'tailbone test fox', authors: ['tailbone'], licenseUrl: 'https://vrm.dev/licenses/1.0/' },
    humanoid: { humanBones } } });
json.extensionsUsed = [...(json.extensionsUsed || []), 'VRMC_vrm'];
const vrmIn = path.join(tmp, 'char.vrm');
fs.writeFileSync(vrmIn, writeGlb(json, bin));
ok(Object.keys(humanBones).length === 22, `the synthetic avatar maps ${Object.keys(humanBones).length} humanoid bones`);

// 2. tailbone reads the map (roles from "vrm") and writes both files
const info = JSON.parse(run(['info', vrmIn, '--json']));
const sources = Object.values(info.skins[0].role_sources);
ok(sources.length === 22 && sources.every((s) => s === 'vrm'), `info: all ${sources.length} roles come from the VRM map`);
const baked = path.join(tmp, 'baked.vrm'), springs = path.join(tmp, 'springs.vrm');
run(['fix', vrmIn, '-o', baked, '--only', 'Walk']);
const rep = JSON.parse(run(['fix', vrmIn, '-o', springs, '--vrm-springs', '--json']));
ok(rep.vrm_springs && rep.vrm_springs.chains === 1 && rep.vrm_springs.version === 1, 'fix --vrm-springs: one VRMC_springBone spring');
const fit = rep.vrm_springs.fit;
console.log('fit: ' + JSON.stringify(fit));
// docs/vrm.md, "Measured": all tips 0.157 -> 0.049 m, last tip 0.247 -> 0.085 m,
// the last tip's swing 0.234 m against ours 0.238 m (0.98; 0.97 to 0.99 over
// the cost weights tried); the bounds leave a margin for where the search ends.
ok(fit.swing_after_m >= 0.75 * fit.swing_baked_m,
  `the fitted model swings the tail like ours: ${fit.swing_after_m.toFixed(3)} m against ${fit.swing_baked_m.toFixed(3)} m ` +
  `(RMS about its mean, relative to the anchor; analytic start ${fit.swing_before_m.toFixed(3)} m)`);
ok(fit.clips >= 1 && fit.tips_after_m < 0.5 * fit.tips_before_m && fit.tip_after_m < 0.6 * fit.tip_before_m,
  `the per-joint fit on ${fit.clips} clips brings the modelled runtime nearer our motion: tip ` +
  `${fit.tip_before_m.toFixed(3)} -> ${fit.tip_after_m.toFixed(3)} m, all tips ${fit.tips_before_m.toFixed(3)} -> ` +
  `${fit.tips_after_m.toFixed(3)} m`);
const outJson = readGlb(fs.readFileSync(springs)).json;
ok(JSON.stringify(outJson.extensions.VRMC_vrm) === JSON.stringify(json.extensions.VRMC_vrm), 'VRMC_vrm kept byte for byte');
ok(outJson.extensionsUsed.includes('VRMC_vrm') && outJson.extensionsUsed.includes('VRMC_springBone'), 'extensionsUsed lists both');
const sp = outJson.extensions.VRMC_springBone.springs[0];
console.log('joints: ' + sp.joints.slice(0, -1).map((j) => `s ${j.stiffness.toPrecision(3)} d ${j.dragForce.toFixed(3)} g ${j.gravityPower.toFixed(3)}`).join(' | '));
ok(sp.joints.length >= 4 && sp.joints.slice(0, -1).every((j) => j.stiffness > 0 && j.dragForce > 0 && j.dragForce < 1),
  `spring joints: ${sp.joints.length}, stiffness ${sp.joints.map((j) => j.stiffness ?? '-').join(' ')}`);
ok(!outJson.animations.some((a) => a.channels.some((c) => /Tail_/.test(outJson.nodes[c.target.node].name || ''))),
  'the springs file carries no tail keys (the runtime moves the tail)');

// 3. play Walk: baked keys vs the three-vrm runtime
async function load(file) {
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMSpringBoneLoaderPlugin(parser));
  const b = fs.readFileSync(file);
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  return await new Promise((res, rej) => loader.parse(ab, '', res, rej));
}
function tip(gltf) { let t = null; gltf.scene.traverse((o) => { if (/Tail_End$/.test(o.name)) t = o; }); return t; }
async function play(file, useSprings, loops) {
  const gltf = await load(file);
  const clip = gltf.animations.find((a) => /Walk/.test(a.name));
  const mixer = new THREE.AnimationMixer(gltf.scene);
  mixer.clipAction(clip).play();
  const mgr = gltf.userData.vrmSpringBoneManager;
  const end = tip(gltf), dt = 1 / 60, frames = Math.round(clip.duration / dt), out = [];
  gltf.scene.updateMatrixWorld(true);
  if (useSprings) mgr.reset();
  const w = new THREE.Vector3();
  for (let f = 0; f < frames * loops; f++) {
    mixer.update(f === 0 ? 0 : dt);
    gltf.scene.updateMatrixWorld(true);
    if (useSprings) mgr.update(dt);
    gltf.scene.updateMatrixWorld(true);
    if (f >= frames * (loops - 1)) out.push(end.getWorldPosition(w).clone());
  }
  const box = new THREE.Box3().setFromObject(gltf.scene);
  return { out, mgr, H: box.max.y - box.min.y };
}
const a = await play(baked, false, 1), b = await play(springs, true, 6);
ok(b.mgr && b.mgr.joints.size >= 4, `three-vrm made ${b.mgr ? b.mgr.joints.size : 0} spring joints`);
const n = Math.min(a.out.length, b.out.length), H = a.H;
let sum = 0, worst = 0, travelA = 0, travelB = 0;
for (let i = 0; i < n; i++) {
  const d = a.out[i].distanceTo(b.out[i]) / H;
  sum += d; worst = Math.max(worst, d);
  travelA = Math.max(travelA, a.out[i].distanceTo(a.out[0]) / H);
  travelB = Math.max(travelB, b.out[i].distanceTo(b.out[0]) / H);
}
// docs/vrm.md, "Measured": mean 4.15% H, max 4.39% H, tip travel 5.5% H
// against the baked 6.5% H with the fitted settings (10.6% / 10.9% and 1.7% H
// with the analytic ones; 3.96 to 4.20% mean, 4.17 to 4.52% max, travel 5.5
// to 6.6% H over the cost weights tried); the tolerance is that plus a margin
// of about 0.8% H (mean) and 1% H (max) for other three.js / libm builds, and
// the runtime must swing the tip at least half as far as the baked tail.
const mean = sum / n, TOL_MEAN = 0.05, TOL_MAX = 0.055, MIN_TRAVEL = 0.5;
console.log(`walk, ${n} frames at 60 Hz: tail tip runtime vs baked: mean ${(100 * mean).toFixed(2)}% H, max ${(100 * worst).toFixed(2)}% H; ` +
  `tip travel baked ${(100 * travelA).toFixed(1)}% H, runtime ${(100 * travelB).toFixed(1)}% H`);
ok(travelB > 0.01, 'the runtime moves the tail (tip travel over 1% H)');
ok(travelB >= MIN_TRAVEL * travelA, `the runtime swings the tail: tip travel at least ${100 * MIN_TRAVEL}% of the baked travel`);
ok(mean < TOL_MEAN && worst < TOL_MAX, `tip within the stated tolerance (mean < ${100 * TOL_MEAN}% H, max < ${100 * TOL_MAX}% H)`);

// 4. VRM 0.x: the same avatar with a "VRM" extension gets a secondaryAnimation bone group
const j0 = JSON.parse(JSON.stringify(json));
delete j0.extensions.VRMC_vrm;
j0.extensionsUsed = j0.extensionsUsed.filter((e) => e !== 'VRMC_vrm').concat(['VRM']);
j0.extensions.VRM = { exporterVersion: 'tailbone-test', meta: { title: 'fox' },
  humanoid: { humanBones: Object.entries(humanBones).map(([bone, v]) => ({ bone, node: v.node })) },
  secondaryAnimation: { boneGroups: [], colliderGroups: [] } };
const vrm0 = path.join(tmp, 'char0.vrm'), out0 = path.join(tmp, 'springs0.vrm');
fs.writeFileSync(vrm0, writeGlb(j0, bin));
run(['fix', vrm0, '-o', out0, '--vrm-springs']);
const o0 = readGlb(fs.readFileSync(out0)).json;
ok(o0.extensions.VRM.secondaryAnimation.boneGroups.length === 1 && !o0.extensions.VRMC_springBone,
  'VRM 0.x: one secondaryAnimation bone group, no VRMC_springBone');
ok(JSON.stringify(o0.extensions.VRM.humanoid) === JSON.stringify(j0.extensions.VRM.humanoid), 'VRM 0.x: humanoid kept');
const g0 = await load(out0);
ok(g0.userData.vrmSpringBoneManager && g0.userData.vrmSpringBoneManager.joints.size >= 4,
  `VRM 0.x: three-vrm made ${g0.userData.vrmSpringBoneManager ? g0.userData.vrmSpringBoneManager.joints.size : 0} spring joints`);
// the figures docs/vrm.md shows (scripts/figures.py, block vrm-measured)
if (process.env.TB_SUMMARY_JSON) {
  fs.writeFileSync(process.env.TB_SUMMARY_JSON, JSON.stringify({
    walk_frames: n, tip_mean_h: mean, tip_max_h: worst, travel_baked_h: travelA, travel_runtime_h: travelB, fit,
    joints: sp.joints.slice(0, -1).map((j) => ({ stiffness: j.stiffness, dragForce: j.dragForce, gravityPower: j.gravityPower })),
  }, null, 1));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
