// Untouched round trip (`tailbone copy`) judged by the Khronos validator:
// the output may carry no issue (error, warning or info) that the input did
// not already have. Corpus files run when ../shared is present; a .gltf with
// an external .bin and a data: URI buffer is always built here.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import validator from 'gltf-validator';
import { corpusFile, corpusDir } from './corpus.mjs';

const cli = process.env.TB_CLI;
fs.mkdirSync(process.env.TB_TMP || '/tmp', { recursive: true });
const tmp = fs.mkdtempSync(path.join(process.env.TB_TMP || '/tmp', 'rt-'));
fs.mkdirSync(tmp, { recursive: true });
let passed = 0, failed = 0;

async function issues(file) {
  const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {
    maxIssues: 0, externalResourceFunction: (uri) =>
      Promise.resolve(new Uint8Array(fs.readFileSync(path.join(path.dirname(file), decodeURIComponent(uri))))),
  });
  return report.issues;
}

const key = (m) => `${m.code} ${m.pointer ?? ''}`;

async function check(name, input, { expectClean = false } = {}) {
  const out = path.join(tmp, path.basename(input).replace(/\.(glb|gltf)$/, '') + '.rt.glb');
  try {
    execFileSync(cli, ['copy', '-q', input, out]);
    const a = await issues(input), b = await issues(out);
    const before = new Set(a.messages.map(key));
    const added = b.messages.filter((m) => !before.has(key(m)));
    // A merged multi-buffer file legitimately loses buffer-level messages; it
    // must still gain none.
    if (added.length) throw new Error('new validator issues: ' + added.slice(0, 5).map(key).join('; '));
    if (expectClean && (b.numErrors || b.numWarnings)) throw new Error(`output has ${b.numErrors} errors, ${b.numWarnings} warnings`);
    console.log(`ok   ${name}: input ${a.numErrors}E/${a.numWarnings}W/${a.numInfos}I, output ${b.numErrors}E/${b.numWarnings}W/${b.numInfos}I`);
    passed++;
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message}`);
    failed++;
  }
}

// A .gltf with an external .bin (interleaved) and a data: URI buffer.
function buildGltf() {
  const pos = new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]);
  const ext = Buffer.alloc(36);
  Buffer.from(pos.buffer).copy(ext);
  fs.writeFileSync(path.join(tmp, 'tri.bin'), ext);
  const idx = Buffer.from(new Uint16Array([0, 1, 2, 0]).buffer);
  const doc = {
    asset: { version: '2.0', generator: 'tailbone test' },
    scene: 0, scenes: [{ nodes: [0] }],
    nodes: [{ mesh: 0, name: 'tri', extras: { kept: true } }],
    meshes: [{ primitives: [{ attributes: { POSITION: 0 }, indices: 1 }] }],
    accessors: [
      { bufferView: 0, componentType: 5126, count: 3, type: 'VEC3', min: [0, 0, 0], max: [1, 1, 0] },
      { bufferView: 1, componentType: 5123, count: 3, type: 'SCALAR' },
    ],
    bufferViews: [
      { buffer: 0, byteLength: 36, target: 34962 },
      { buffer: 1, byteLength: 6, target: 34963 },
    ],
    buffers: [
      { uri: 'tri.bin', byteLength: 36 },
      { uri: 'data:application/octet-stream;base64,' + idx.toString('base64'), byteLength: 8 },
    ],
  };
  const file = path.join(tmp, 'tri.gltf');
  fs.writeFileSync(file, JSON.stringify(doc));
  return file;
}

await check('built .gltf with external and data: buffers', buildGltf(), { expectClean: true });

const shared = process.env.TB_SHARED_DIR;
const corpus = corpusDir();
if (corpus) {
  for (const dir of ['characters', 'clips', 'reference']) {
    const d = path.join(corpus, dir);
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).filter((f) => f.endsWith('.glb')).sort())
      await check(`${dir}/${f}`, path.join(d, f));
  }
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
