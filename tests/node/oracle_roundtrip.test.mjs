// Round trips judged by a second reader (issue 20): `tailbone copy` and
// `tailbone fix` on a file that changes nothing must keep every JSON value
// (extras and extensions included) and every accessor's values. The JSON is
// read here with JSON.parse from the GLB chunks, the accessors and node
// extras with three.js's GLTFLoader (its own accessor decoder: strides,
// normalisation, sparse), never through tailbone's loader.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { stripTextures } from './gltf_util.mjs';
import { corpusDir } from './corpus.mjs';

const cli = process.env.TB_CLI;
if (!cli) {
  console.log('skip: TB_CLI not set');
  process.exit(77);
}
fs.mkdirSync(process.env.TB_TMP || '/tmp', { recursive: true });
const tmp = fs.mkdtempSync(path.join(process.env.TB_TMP || '/tmp', 'oracle-'));
let passed = 0, failed = 0;

function glbJson(buf) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (dv.getUint32(0, true) !== 0x46546c67) throw new Error('not a GLB');
  const len = dv.getUint32(12, true);
  return JSON.parse(new TextDecoder().decode(buf.subarray(20, 20 + len)));
}

function parse(buf) {
  return new Promise((resolve, reject) => new GLTFLoader().parse(stripTextures(buf), '', resolve, reject));
}

// The accessor's element values as three.js decodes them, raw (not
// denormalised), as bytes.
function accessorBytes(attr) {
  let arr = attr.array;
  if (attr.isInterleavedBufferAttribute) {
    const d = attr.data, n = attr.count, k = attr.itemSize;
    arr = new attr.array.constructor(n * k);
    for (let i = 0; i < n; i++)
      for (let c = 0; c < k; c++) arr[i * k + c] = d.array[i * d.stride + attr.offset + c];
  }
  return new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
}

function firstDiff(a, b, at = '') {
  if (isDeepStrictEqual(a, b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDiff(a[k], b[k], `${at}/${k}`);
      if (d) return d;
    }
  }
  return `${at || '/'}: ${JSON.stringify(a)?.slice(0, 80)} became ${JSON.stringify(b)?.slice(0, 80)}`;
}

async function check(name, input, args) {
  const out = path.join(tmp, name.replace(/[^A-Za-z0-9_.-]/g, '_') + '.out.glb');
  try {
    execFileSync(cli, [...args(input, out)], { stdio: ['ignore', 'ignore', 'pipe'] });
    const a = fs.readFileSync(input), b = fs.readFileSync(out);
    const ja = glbJson(a), jb = glbJson(b);
    // 1. every JSON value, extras and extensions included
    const d = firstDiff(ja, jb);
    if (d) throw new Error('JSON differs at ' + d);
    // 2. every accessor's values and every node's extras, through three.js
    const [ga, gb] = await Promise.all([parse(a), parse(b)]);
    const n = (ja.accessors || []).length;
    for (let i = 0; i < n; i++) {
      const [xa, xb] = await Promise.all([ga.parser.getDependency('accessor', i), gb.parser.getDependency('accessor', i)]);
      const ba = accessorBytes(xa), bb = accessorBytes(xb);
      if (ba.length !== bb.length || !ba.every((v, k) => v === bb[k]))
        throw new Error(`accessor ${i}: values differ (${ba.length} vs ${bb.length} bytes)`);
    }
    for (let i = 0; i < (ja.nodes || []).length; i++) {
      const [oa, ob] = await Promise.all([ga.parser.getDependency('node', i), gb.parser.getDependency('node', i)]);
      // three.js puts the extras in userData, with the node's name and its
      // extensions (gltfExtensions) beside them
      // (a node with a one-primitive mesh becomes that mesh: its extras come first)
      const nd = ja.nodes[i], me = nd.mesh !== undefined ? ja.meshes[nd.mesh] : null;
      const mx = me && me.primitives.length === 1 ? me.extras : undefined;
      const want = { ...(mx ?? {}), ...(nd.extras ?? {}) };
      if (ja.nodes[i].extensions) want.gltfExtensions = ja.nodes[i].extensions;
      const read = (o) => { const u = { ...o.userData }; if (u.name === o.userData.name) delete u.name; return u; };
      if (!isDeepStrictEqual(read(oa), want) || !isDeepStrictEqual(read(ob), want))
        throw new Error(`node ${i}: extras as three.js reads them: ${JSON.stringify(read(ob))}, want ${JSON.stringify(want)}`);
    }
    console.log(`ok   ${name}: JSON equal, ${n} accessors byte-equal, ${(ja.nodes || []).length} nodes' extras`);
    passed++;
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message}`);
    failed++;
  }
}

// A GLB that uses what a careless writer or loader would lose: extras on
// every level, an unknown (not required) extension, an interleaved view
// with a stride, a normalised accessor and a sparse one.
function buildRich() {
  const bin = Buffer.alloc(96 + 12 + 12 + 12);
  const pos = [[0, 0, 0], [1, 0, 0], [0, 1, 0]];
  for (let v = 0; v < 3; v++) {
    for (let c = 0; c < 3; c++) bin.writeFloatLE(pos[v][c], v * 20 + c * 4);
    for (let c = 0; c < 4; c++) bin.writeUInt8((v * 70 + c * 30) & 255, v * 20 + 12 + c);
  }
  bin.writeUInt16LE(0, 60); bin.writeUInt16LE(1, 62); bin.writeUInt16LE(2, 64);
  bin.writeUInt16LE(1, 96);                       // sparse index: element 1
  for (let c = 0; c < 3; c++) bin.writeFloatLE(0.5 + c, 108 + c * 4); // its new value
  const doc = {
    asset: { version: '2.0', generator: 'tailbone oracle test', extras: { a: [1, 2.5, 'x'] } },
    extensionsUsed: ['EXT_tailbone_test_unknown'],
    extras: { top: { nested: true, n: 1e-7 } },
    scene: 0,
    scenes: [{ nodes: [0], name: 'S', extras: { s: 1 } }],
    nodes: [
      { name: 'root', children: [1], extras: { kept: true, list: [1, { b: null }] },
        extensions: { EXT_tailbone_test_unknown: { value: 42, s: 'ü' } } },
      { name: 'tri', mesh: 0, translation: [0.1, 0.2, 0.3], extras: { id: 'n1' } },
    ],
    meshes: [{ name: 'm', extras: { m: 2 }, primitives: [{ attributes: { POSITION: 0, COLOR_0: 1 }, indices: 2, extras: { p: 3 } }] }],
    accessors: [
      { bufferView: 0, componentType: 5126, count: 3, type: 'VEC3', min: [0, 0, 0], max: [1, 1, 0] },
      { bufferView: 0, byteOffset: 12, componentType: 5121, normalized: true, count: 3, type: 'VEC4' },
      { bufferView: 1, componentType: 5123, count: 3, type: 'SCALAR' },
      { bufferView: 2, componentType: 5126, count: 3, type: 'VEC3',
        sparse: { count: 1, indices: { bufferView: 3, componentType: 5123 }, values: { bufferView: 4 } } },
    ],
    bufferViews: [
      { buffer: 0, byteOffset: 0, byteLength: 60, byteStride: 20, target: 34962 },
      { buffer: 0, byteOffset: 60, byteLength: 6, target: 34963 },
      { buffer: 0, byteOffset: 68, byteLength: 36 - 8, extras: { v: 1 } },
      { buffer: 0, byteOffset: 96, byteLength: 2 },
      { buffer: 0, byteOffset: 108, byteLength: 12 },
    ],
    buffers: [{ byteLength: bin.length }],
  };
  doc.bufferViews[2].byteLength = 36; // 3 floats × 3 for the sparse base
  const text = Buffer.from(JSON.stringify(doc));
  const jpad = Buffer.alloc((4 - (text.length % 4)) % 4, 0x20);
  const json = Buffer.concat([text, jpad]);
  const total = 12 + 8 + json.length + 8 + bin.length;
  const head = Buffer.alloc(12);
  head.write('glTF', 0); head.writeUInt32LE(2, 4); head.writeUInt32LE(total, 8);
  const jh = Buffer.alloc(8); jh.writeUInt32LE(json.length, 0); jh.writeUInt32LE(0x4e4f534a, 4);
  const bh = Buffer.alloc(8); bh.writeUInt32LE(bin.length, 0); bh.writeUInt32LE(0x004e4942, 4);
  const file = path.join(tmp, 'rich.glb');
  fs.writeFileSync(file, Buffer.concat([head, jh, json, bh, bin]));
  return file;
}

const copy = (i, o) => ['copy', '-q', i, o];
await check('built: extras, unknown extension, stride, normalised, sparse', buildRich(), copy);
// `fix` on a file with nothing to repair writes it unchanged too (docs/fix.md)
const plain = path.join(tmp, 'plain.glb');
execFileSync(cli, ['synth', '--variant', 'cape', '-o', plain], { stdio: 'ignore' });
await check('fix on synth cape (nothing to repair)', plain, (i, o) => ['fix', '-q', i, '-o', o]);

const corpus = corpusDir();
if (corpus) {
  for (const dir of ['characters', 'clips', 'reference']) {
    const d = path.join(corpus, dir);
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).filter((f) => f.endsWith('.glb')).sort())
      await check(`${dir}/${f}`, path.join(d, f), copy);
  }
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
