// Compares two rigged GLBs as three.js plays them: node scripts/compare_skinned.mjs A.glb B.glb
// Used to judge FBX converters (docs/blender.md, "FBX"): B is A after a round trip.
// Each skinned vertex of A is paired with the nearest skinned vertex of B in the
// bind pose (world space); then, at 12 instants of every clip A and B share by
// name, the posed positions of each pair are compared. Prints one JSON line:
// vertex/joint/clip counts, and per clip the p99 and max distance as a
// fraction of A's height (bind pose) and the clip durations.
import fs from 'node:fs';
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { stripTextures } from '../tests/node/gltf_util.mjs';

async function load(file) {
  const ab = stripTextures(new Uint8Array(fs.readFileSync(file)));
  return await new Promise((res, rej) => new GLTFLoader().parse(ab, '', res, rej));
}

function skinned(g) {
  const out = [];
  g.scene.traverse((o) => { if (o.isSkinnedMesh) out.push(o); });
  return out;
}

// World positions of every skinned vertex, posed as the scene is now.
function positions(g) {
  g.scene.updateMatrixWorld(true);
  const pts = [];
  const v = new THREE.Vector3();
  for (const m of skinned(g)) {
    m.skeleton.update();
    const n = m.geometry.attributes.position.count;
    for (let i = 0; i < n; i++) {
      m.getVertexPosition(i, v);
      v.applyMatrix4(m.matrixWorld);
      pts.push(v.x, v.y, v.z);
    }
  }
  return new Float64Array(pts);
}

function pose(g, clip, t) {
  const mixer = new THREE.AnimationMixer(g.scene);
  if (clip) { mixer.clipAction(clip).play(); mixer.setTime(t); }
  g.scene.updateMatrixWorld(true);
  return mixer;
}

// Nearest point of B for each point of A (uniform grid).
function pair(a, b, cell) {
  const grid = new Map();
  const key = (x, y, z) => `${Math.floor(x / cell)},${Math.floor(y / cell)},${Math.floor(z / cell)}`;
  for (let j = 0; j < b.length / 3; j++) {
    const k = key(b[3 * j], b[3 * j + 1], b[3 * j + 2]);
    if (!grid.has(k)) grid.set(k, []);
    grid.get(k).push(j);
  }
  const out = new Int32Array(a.length / 3);
  for (let i = 0; i < a.length / 3; i++) {
    const x = a[3 * i], y = a[3 * i + 1], z = a[3 * i + 2];
    let best = -1, bd = Infinity;
    for (let r = 1; best < 0 && r < 64; r *= 2)
      for (let dx = -r; dx <= r; dx++) for (let dy = -r; dy <= r; dy++) for (let dz = -r; dz <= r; dz++) {
        const c = grid.get(key(x + dx * cell, y + dy * cell, z + dz * cell));
        if (c) for (const j of c) {
          const d = (b[3 * j] - x) ** 2 + (b[3 * j + 1] - y) ** 2 + (b[3 * j + 2] - z) ** 2;
          if (d < bd) { bd = d; best = j; }
        }
      }
    out[i] = best;
  }
  return out;
}

function stats(a, b, map, h) {
  const d = [];
  for (let i = 0; i < map.length; i++) {
    const j = map[i];
    d.push(Math.hypot(a[3 * i] - b[3 * j], a[3 * i + 1] - b[3 * j + 1], a[3 * i + 2] - b[3 * j + 2]) / h);
  }
  d.sort((x, y) => x - y);
  return { p99: d[Math.floor(0.99 * (d.length - 1))], max: d[d.length - 1] };
}

// Centre and size of the rest-pose box, to tell a moved or scaled whole from a bad skin.
function box(p) {
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < p.length; i++) { lo[i % 3] = Math.min(lo[i % 3], p[i]); hi[i % 3] = Math.max(hi[i % 3], p[i]); }
  return { centre: lo.map((l, k) => +((l + hi[k]) / 2).toFixed(3)), size: lo.map((l, k) => +(hi[k] - l).toFixed(3)) };
}

const [fa, fb] = process.argv.slice(2);
const A = await load(fa), B = await load(fb);
const pa = positions(A), pb = positions(B);
let lo = Infinity, hi = -Infinity;
for (let i = 1; i < pa.length; i += 3) { lo = Math.min(lo, pa[i]); hi = Math.max(hi, pa[i]); }
const h = hi - lo;
const map = pair(pa, pb, h / 50);
const joints = (g) => new Set(skinned(g).flatMap((m) => m.skeleton.bones.map((b) => b.name))).size;
const res = {
  a: fa, b: fb, height: h,
  vertices: [pa.length / 3, pb.length / 3], joints: [joints(A), joints(B)],
  clips: [A.animations.length, B.animations.length],
  bind: stats(pa, pb, map, h), per_clip: {},
  box: [box(pa), box(pb)],
};
for (const ca of A.animations) {
  // Blender's FBX round trip may drop an "Armature|" prefix: compare by the last part
  const last = (n) => n.split('|').pop();
  const cb = B.animations.find((c) => c.name === ca.name) || B.animations.find((c) => last(c.name) === last(ca.name));
  if (!cb) { res.per_clip[ca.name] = 'missing'; continue; }
  let p99 = 0, max = 0;
  for (let k = 0; k < 12; k++) {
    const t = (ca.duration * k) / 12;
    const ma = pose(A, ca, t), mb = pose(B, cb, t);
    const s = stats(positions(A), positions(B), map, h);
    p99 = Math.max(p99, s.p99); max = Math.max(max, s.max);
    ma.stopAllAction(); mb.stopAllAction();
    ma.uncacheRoot(A.scene); mb.uncacheRoot(B.scene);
  }
  res.per_clip[ca.name] = { duration: [+ca.duration.toFixed(3), +cb.duration.toFixed(3)], p99: +p99.toFixed(4), max: +max.toFixed(4) };
}
console.log(JSON.stringify(res));
