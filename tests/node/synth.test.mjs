// `tailbone synth` output judged by real clients: the Khronos glTF validator
// (no errors, no warnings) and three.js (loads, skinned meshes, every clip
// plays with finite bone matrices, the skinned character stands 1.9 m tall
// in world space whatever its units).
import fs from 'node:fs';
import path from 'node:path';
import validator from 'gltf-validator';
import * as THREE from 'three';
import { synth, variants, loadGltf, skinnedMeshes, skinnedBox, pose } from './synth_lib.mjs';

const cli = process.env.TB_CLI;
if (!cli || !fs.existsSync(cli)) {
  console.log('skip: TB_CLI is not set to the tailbone binary');
  process.exit(77);
}
const tmp = fs.mkdtempSync(path.join(process.env.TB_TMP || '/tmp', 'synth-'));
const CLIPS = ['Walk', 'Sprint', 'Idle', 'Crouch', 'HipSweep', 'BackFlip'];
let passed = 0, failed = 0;

async function check(name, fn) {
  try {
    const note = await fn();
    console.log(`ok   ${name}${note ? ': ' + note : ''}`);
    passed++;
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message}`);
    failed++;
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

const names = variants(cli);
await check('synth --list names the variants', () => {
  assert(names.length >= 15, `only ${names.length} variants`);
  for (const v of ['plain', 'tail_leg', 'tail_fur', 'cape', 'skirt', 'scabbard', 'ears', 'hair'])
    assert(names.includes(v), `missing ${v}`);
  return `${names.length} variants`;
});

for (const v of names) {
  const glb = path.join(tmp, `${v}.glb`), truthFile = path.join(tmp, `${v}.json`);
  synth(cli, ['--variant', v, '-o', glb, '--truth', truthFile]);
  const buf = fs.readFileSync(glb);
  const truth = JSON.parse(fs.readFileSync(truthFile, 'utf8'));

  await check(`${v}: glTF validator`, async () => {
    const report = await validator.validateBytes(new Uint8Array(buf), { maxIssues: 0 });
    const is = report.issues;
    const bad = is.messages.filter((m) => m.severity <= 1).slice(0, 5).map((m) => `${m.code} ${m.pointer}`);
    assert(is.numErrors === 0 && is.numWarnings === 0,
      `${is.numErrors} errors, ${is.numWarnings} warnings: ${bad.join('; ')}`);
    const infos = [...new Set(is.messages.filter((m) => m.severity === 2).map((m) => m.code))];
    return `0 errors, 0 warnings, ${is.numInfos} infos${infos.length ? ' (' + infos.join(', ') + ')' : ''}`;
  });

  await check(`${v}: three.js loads a 1.9 m skinned character with every clip`, async () => {
    const gltf = await loadGltf(buf);
    const meshes = skinnedMeshes(gltf);
    assert(meshes.length >= 1, 'no SkinnedMesh');
    assert(meshes.every((m) => m.skeleton.bones.length === 22), 'skeleton is not 22 bones');
    const clips = gltf.animations.map((a) => a.name);
    for (const c of CLIPS) assert(clips.includes(c), `clip ${c} missing`);
    const box = skinnedBox(gltf);
    const h = box.max.y - box.min.y;
    assert(Math.abs(h - 1.9) < 0.01, `world height ${h.toFixed(4)} m`);
    assert(Math.abs(box.min.y) < 0.005, `feet at ${box.min.y.toFixed(4)} m`);
    assert(Math.abs(h - truth.height_m) < 1e-3, `truth height ${truth.height_m} vs ${h}`);
    const verts = meshes.reduce((n, m) => n + m.geometry.attributes.position.count, 0);
    assert(verts === truth.vertex_count, `three sees ${verts} vertices, truth says ${truth.vertex_count}`);
    return `H ${h.toFixed(3)} m, ${verts} vertices, ${meshes.length} skinned mesh(es)`;
  });

  await check(`${v}: every clip plays with finite bone matrices`, async () => {
    const gltf = await loadGltf(buf);
    const bones = skinnedMeshes(gltf)[0].skeleton.bones;
    for (const clip of gltf.animations) {
      const mixer = new THREE.AnimationMixer(gltf.scene);
      mixer.clipAction(clip).play();
      for (let step = 0; step <= 10; step++) {
        mixer.setTime((clip.duration * step) / 10);
        gltf.scene.updateMatrixWorld(true);
        for (const b of bones)
          assert(b.matrixWorld.elements.every(Number.isFinite), `${clip.name}: non-finite matrix on ${b.name}`);
      }
      mixer.stopAllAction();
      mixer.uncacheRoot(gltf.scene);
    }
  });
}

// Motions look like what they are named: measured on the skinned mesh.
await check('HipSweep carries the body 0.5 m sideways at 2/3 s', async () => {
  const gltf = await loadGltf(fs.readFileSync(path.join(tmp, 'plain.glb')));
  const x0 = (() => { const b = skinnedBox(gltf); return (b.min.x + b.max.x) / 2; })();
  pose(gltf, 'HipSweep', 2 / 3);
  const b = skinnedBox(gltf);
  const dx = (b.min.x + b.max.x) / 2 - x0;
  assert(Math.abs(dx - 0.5) < 0.02, `moved ${dx.toFixed(3)} m`);
  return `${dx.toFixed(3)} m`;
});

await check('Crouch lowers the head by more than 0.4 m; BackFlip goes up and turns over', async () => {
  const gltf = await loadGltf(fs.readFileSync(path.join(tmp, 'plain.glb')));
  pose(gltf, 'Crouch', 1.0);
  const top = skinnedBox(gltf).max.y;
  assert(top < 1.5, `crouched top at ${top.toFixed(3)} m`);
  const g2 = await loadGltf(fs.readFileSync(path.join(tmp, 'plain.glb')));
  pose(g2, 'BackFlip', 1.0); // mid-air, upside down: the head is the lowest part
  const head = g2.scene.getObjectByName('mixamorig:Head') || g2.scene.getObjectByName('mixamorigHead');
  const hips = g2.scene.getObjectByName('mixamorig:Hips') || g2.scene.getObjectByName('mixamorigHips');
  const hp = new THREE.Vector3().setFromMatrixPosition(head.matrixWorld);
  const pp = new THREE.Vector3().setFromMatrixPosition(hips.matrixWorld);
  assert(hp.y < pp.y, `head ${hp.y.toFixed(2)} above hips ${pp.y.toFixed(2)} at 1.0 s`);
  assert(pp.y > 1.5, `hips only at ${pp.y.toFixed(2)} m mid-air`);
  return `crouch top ${top.toFixed(2)} m; flip hips ${pp.y.toFixed(2)} m, head ${hp.y.toFixed(2)} m`;
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
