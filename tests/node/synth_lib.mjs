// Helpers for tests/node/synth.test.mjs: run `tailbone synth`, load with
// three.js in Node (no DOM), pose a clip, and rasterise a side/front view
// to PNG (a ~100-line z-buffer renderer: no GPU, no canvas, deterministic).
//
// Also a tool: node tests/node/synth_lib.mjs render OUTDIR [CLI] writes
// OUTDIR/<variant>.png for every variant (bind pose | Walk | Crouch | front)
// and OUTDIR/clips.png (each clip of tail_leg), the pictures in docs/synth.md.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';

export function synth(cli, args) {
  return execFileSync(cli, ['synth', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function variants(cli) {
  return synth(cli, ['--list']).split('\n').filter((s) => s.length);
}

export async function loadGltf(buf) {
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  return await new Promise((resolve, reject) => new GLTFLoader().parse(ab, '', resolve, reject));
}

export function skinnedMeshes(gltf) {
  const out = [];
  gltf.scene.traverse((o) => { if (o.isSkinnedMesh) out.push(o); });
  return out;
}

// World-space bounding box of the skinned (posed) meshes.
export function skinnedBox(gltf) {
  gltf.scene.updateMatrixWorld(true);
  const box = new THREE.Box3();
  for (const m of skinnedMeshes(gltf)) {
    m.skeleton.update();
    m.computeBoundingBox(); // applies skinning in three >= r151
    box.union(m.boundingBox.clone().applyMatrix4(m.matrixWorld));
  }
  return box;
}

// Poses the scene at time t of a clip (null: bind pose stays).
export function pose(gltf, clipName, t) {
  const mixer = new THREE.AnimationMixer(gltf.scene);
  if (clipName) {
    const clip = gltf.animations.find((a) => a.name === clipName);
    mixer.clipAction(clip).play();
    mixer.setTime(t);
  }
  gltf.scene.updateMatrixWorld(true);
  return mixer;
}

// ---- rasteriser --------------------------------------------------------

function crc32(buf) {
  let c, crc = 0xffffffff;
  for (let n = 0; n < buf.length; n++) {
    c = (crc ^ buf[n]) & 0xff;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crc = (crc >>> 8) ^ c;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

export function encodePNG(w, h, rgb) {
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) {
    raw[y * (w * 3 + 1)] = 0;
    rgb.copy ? rgb.copy(raw, y * (w * 3 + 1) + 1, y * w * 3, (y + 1) * w * 3)
      : raw.set(rgb.subarray(y * w * 3, (y + 1) * w * 3), y * (w * 3 + 1) + 1);
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = 2; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

// Draws the posed skinned meshes into an image region. view 'side': looking
// at the character's left side (+Z to the right); 'front': facing it.
export function rasterise(img, W, H, x0, panel, gltf, view, extent = 2.3) {
  const zbuf = new Float32Array(panel * panel).fill(-Infinity);
  const v = new THREE.Vector3();
  const scale = panel / extent;
  const project = (p) => view === 'side'
    ? [panel / 2 + (p.z) * scale, panel - 8 - p.y * scale, p.x]
    : [panel / 2 - p.x * scale, panel - 8 - p.y * scale, p.z];
  const light = new THREE.Vector3(0.4, 0.8, 0.45).normalize();
  for (const m of skinnedMeshes(gltf)) {
    const geo = m.geometry, idx = geo.index.array, n = geo.attributes.position.count;
    const P = new Float32Array(n * 3), S = new Float32Array(n * 3);
    for (let i = 0; i < n; i++) {
      m.getVertexPosition(i, v); // skinned, in the mesh's space
      v.applyMatrix4(m.matrixWorld);
      P[i * 3] = v.x; P[i * 3 + 1] = v.y; P[i * 3 + 2] = v.z;
      const s = project(v); S[i * 3] = s[0]; S[i * 3 + 1] = s[1]; S[i * 3 + 2] = s[2];
    }
    const col = m.material.color ? m.material.color : new THREE.Color(0.7, 0.7, 0.7);
    const a = new THREE.Vector3(), b = new THREE.Vector3(), c = new THREE.Vector3();
    for (let t = 0; t < idx.length; t += 3) {
      const i0 = idx[t], i1 = idx[t + 1], i2 = idx[t + 2];
      a.fromArray(P, i0 * 3); b.fromArray(P, i1 * 3); c.fromArray(P, i2 * 3);
      const nrm = b.clone().sub(a).cross(c.clone().sub(a)).normalize();
      const shade = 0.35 + 0.65 * Math.abs(nrm.dot(light));
      const xs = [S[i0 * 3], S[i1 * 3], S[i2 * 3]], ys = [S[i0 * 3 + 1], S[i1 * 3 + 1], S[i2 * 3 + 1]];
      const zs = [S[i0 * 3 + 2], S[i1 * 3 + 2], S[i2 * 3 + 2]];
      const minx = Math.max(0, Math.floor(Math.min(...xs))), maxx = Math.min(panel - 1, Math.ceil(Math.max(...xs)));
      const miny = Math.max(0, Math.floor(Math.min(...ys))), maxy = Math.min(panel - 1, Math.ceil(Math.max(...ys)));
      const area = (xs[1] - xs[0]) * (ys[2] - ys[0]) - (xs[2] - xs[0]) * (ys[1] - ys[0]);
      if (Math.abs(area) < 1e-9) continue;
      for (let py = miny; py <= maxy; py++) for (let px = minx; px <= maxx; px++) {
        const qx = px + 0.5, qy = py + 0.5;
        const w0 = ((xs[1] - qx) * (ys[2] - qy) - (xs[2] - qx) * (ys[1] - qy)) / area;
        const w1 = ((xs[2] - qx) * (ys[0] - qy) - (xs[0] - qx) * (ys[2] - qy)) / area;
        const w2 = 1 - w0 - w1;
        if (w0 < 0 || w1 < 0 || w2 < 0) continue;
        const z = w0 * zs[0] + w1 * zs[1] + w2 * zs[2];
        if (z <= zbuf[py * panel + px]) continue;
        zbuf[py * panel + px] = z;
        const o = (py * W + x0 + px) * 3;
        img[o] = Math.min(255, col.r * 255 * shade); img[o + 1] = Math.min(255, col.g * 255 * shade);
        img[o + 2] = Math.min(255, col.b * 255 * shade);
      }
    }
  }
  // ground line
  for (let px = 0; px < panel; px++) { const o = ((panel - 8) * W + x0 + px) * 3; img[o] = img[o + 1] = img[o + 2] = 60; }
}

// bind | Walk 0.25 s | Crouch 1.0 s, side views, then the bind front view.
export async function renderVariant(buf, panel = 220) {
  const shots = [[null, 0, 'side'], ['Walk', 0.25, 'side'], ['Crouch', 1.0, 'side'], [null, 0, 'front']];
  const W = panel * shots.length, H = panel;
  const img = Buffer.alloc(W * H * 3, 235);
  for (let i = 0; i < shots.length; i++) {
    const gltf = await loadGltf(buf);
    pose(gltf, shots[i][0], shots[i][1]);
    rasterise(img, W, H, i * panel, panel, gltf, shots[i][2]);
  }
  return encodePNG(W, H, img);
}

// One row per clip, `frames` evenly spaced side views (extent 3 m: the flip).
export async function renderClips(buf, frames = 8, panel = 130) {
  const gltf0 = await loadGltf(buf);
  const clips = gltf0.animations;
  const W = panel * frames, H = panel * clips.length;
  const img = Buffer.alloc(W * H * 3, 235);
  for (let r = 0; r < clips.length; r++) {
    const row = Buffer.alloc(W * panel * 3, 235);
    for (let i = 0; i < frames; i++) {
      const gltf = await loadGltf(buf);
      pose(gltf, clips[r].name, (clips[r].duration * i) / (frames - 1));
      rasterise(row, W, panel, i * panel, panel, gltf, clips[r].name === 'HipSweep' ? 'front' : 'side', 3.0);
    }
    row.copy(img, r * W * panel * 3);
  }
  return encodePNG(W, H, img);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname) &&
    process.argv[2] === 'render') {
  const outDir = process.argv[3];
  const cli = process.argv[4] || process.env.TB_CLI;
  fs.mkdirSync(outDir, { recursive: true });
  for (const v of variants(cli)) {
    const glb = path.join(outDir, `${v}.glb`);
    synth(cli, ['--variant', v, '-o', glb]);
    fs.writeFileSync(path.join(outDir, `${v}.png`), await renderVariant(fs.readFileSync(glb)));
    fs.unlinkSync(glb);
    console.log(v);
  }
  const glb = path.join(outDir, 'clips.glb');
  synth(cli, ['--variant', 'tail_leg', '-o', glb]);
  fs.writeFileSync(path.join(outDir, 'clips.png'), await renderClips(fs.readFileSync(glb)));
  fs.unlinkSync(glb);
}
