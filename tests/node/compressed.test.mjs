// Compressed input (KHR_draco_mesh_compression, EXT_meshopt_compression and
// KHR_meshopt_compression): a corpus character is compressed here with the
// pinned gltf-transform CLI (package-lock.json; nothing compressed is
// committed; the KHR copy is its EXT file renamed, see renameExt), then
//  - `tailbone copy` decodes it: the output names neither extension, the
//    Khronos validator finds no error and no unused bufferView, accessor or
//    buffer in it, the BIN holds only its bufferViews, and every vertex attribute and
//    index of every primitive equals what gltf-transform's own decoders
//    (draco3dgltf, meshoptimizer from npm) read from the compressed file;
//  - `tailbone fix` runs on it and finds the tail.
// A tailbone built without a decoder must refuse that extension in one line.
// Skips (77) when the corpus or gltf-transform is absent.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import validator from 'gltf-validator';
import { corpusFile } from './corpus.mjs';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const cli = process.env.TB_CLI;
const character = corpusFile('characters/banter_Wolf.glb'); // fails with TB_REQUIRE_CORPUS=1
const gt = path.join(root, 'node_modules/@gltf-transform/cli/bin/cli.js');
if (!character) process.exit(77);
if (!fs.existsSync(gt)) {
  console.log('skip: node_modules/@gltf-transform/cli absent (npm ci)');
  if (process.env.TB_SKIP_LOG) fs.appendFileSync(process.env.TB_SKIP_LOG, 'node_compressed: test skipped, @gltf-transform/cli absent\n');
  process.exit(77);
}
const tmp = fs.mkdtempSync(path.join(process.env.TB_TMP || '/tmp', 'compressed-'));
const decoders = execFileSync(cli, ['--version']).toString();
let passed = 0, failed = 0;

const { NodeIO } = await import(require.resolve('@gltf-transform/core'));
const { ALL_EXTENSIONS } = await import(require.resolve('@gltf-transform/extensions'));
const draco3d = require(require.resolve('draco3dgltf'));
const { MeshoptDecoder } = await import(require.resolve('meshoptimizer'));

function jsonChunk(file) {
  const b = fs.readFileSync(file);
  const len = b.readUInt32LE(12);
  return JSON.parse(b.subarray(20, 20 + len).toString());
}

// Every primitive's attributes and indices, in document order.
async function primitives(io, file) {
  const doc = await io.read(file);
  const out = [];
  for (const mesh of doc.getRoot().listMeshes())
    for (const prim of mesh.listPrimitives()) {
      const p = { attrs: {}, indices: prim.getIndices()?.getArray() ?? null };
      for (const sem of prim.listSemantics()) p.attrs[sem] = prim.getAttribute(sem);
      out.push(p);
    }
  return out;
}

// Equal values (floats to 1e-6 relative). `units` allows that many units of
// difference (integer data); returns how many values differed at all.
function sameArrays(a, b, what, units = 0) {
  if (a.length !== b.length) throw new Error(`${what}: ${b.length} values, expected ${a.length}`);
  let differ = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i], y = b[i];
    if (x === y) continue;
    differ++;
    if (Math.abs(x - y) <= Math.max(units, 1e-6 * Math.max(1, Math.abs(x)))) continue;
    throw new Error(`${what}[${i}]: ${y}, expected ${x}`);
  }
  return differ;
}

// KHR_meshopt_compression: the pinned gltf-transform writes only the EXT
// name. Its spec (Appendix C, "Content guidelines") says an EXT file converts
// losslessly to KHR by renaming the extension (the v0 bitstream is valid
// KHR): the names have the same length, so the JSON chunk is rewritten in
// place. The oracle still reads the EXT file.
function renameExt(from, to, src, dst) {
  const b = Buffer.from(fs.readFileSync(src));
  const len = b.readUInt32LE(12);
  const text = b.subarray(20, 20 + len).toString('latin1').split(from).join(to);
  if (text.length !== len) throw new Error('rename changed the JSON length');
  b.write(text, 20, 'latin1');
  fs.writeFileSync(dst, b);
}

async function check(kind, ext) {
  const name = `${kind}: ${path.basename(character)}`;
  const base = kind === 'meshopt-khr' ? 'meshopt' : kind;
  const oracle = path.join(tmp, `wolf_${base}.glb`);
  const packed = path.join(tmp, `wolf_${kind}.glb`), plain = path.join(tmp, `wolf_${kind}.plain.glb`);
  try {
    if (!fs.existsSync(oracle)) execFileSync(process.execPath, [gt, base, character, oracle], { stdio: 'pipe' });
    if (kind === 'meshopt-khr') renameExt('EXT_meshopt_compression', ext, oracle, packed);
    const packedJson = jsonChunk(packed);
    if (!(packedJson.extensionsRequired || []).includes(ext)) throw new Error(`the compressed file does not require ${ext}`);
    const run = spawnSync(cli, ['copy', packed, plain]);
    const err = run.stderr.toString();
    if (!decoders.includes(base)) {
      // built without the library: the clear refusal, one line, no output
      if (run.status !== 1 || !err.includes(ext) || fs.existsSync(plain))
        throw new Error(`expected a refusal naming ${ext}, got ${run.status}: ${err}`);
      console.log(`ok   ${name}: refused without the library (${err.trim()})`);
      passed++;
      return;
    }
    if (run.status !== 0) throw new Error(`tailbone copy failed: ${err}`);
    if (!err.includes(`decoded ${ext}`) || !err.includes('written uncompressed')) throw new Error(`no note: ${err}`);
    const j = jsonChunk(plain);
    const text = JSON.stringify(j);
    if (text.includes(ext)) throw new Error(`output still names ${ext}`);
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(plain)), { maxIssues: 0 });
    if (report.issues.numErrors)
      throw new Error('validator errors: ' + report.issues.messages.filter((m) => m.severity === 0)
        .slice(0, 5).map((m) => `${m.code} ${m.pointer}`).join('; '));
    // nothing left behind: no bufferView, accessor or buffer that nothing uses
    // (the decoded bitstreams are dropped with their bytes)
    const unused = report.issues.messages.filter((m) => m.code === 'UNUSED_OBJECT' &&
      /^\/(bufferViews|accessors|buffers)\//.test(m.pointer || ''));
    if (unused.length) throw new Error('unused objects left: ' + unused.slice(0, 5).map((m) => m.pointer).join(', '));
    // and nothing the original character did not have already
    const orig = await validator.validateBytes(new Uint8Array(fs.readFileSync(character)), { maxIssues: 0 });
    if (report.issues.numWarnings > orig.issues.numWarnings || report.issues.numInfos > orig.issues.numInfos)
      throw new Error(`validator: ${report.issues.numWarnings}W/${report.issues.numInfos}I, ` +
        `the original ${orig.issues.numWarnings}W/${orig.issues.numInfos}I`);
    const bytesIn = j.bufferViews.reduce((a, v) => a + v.byteLength, 0);
    if (j.buffers[0].byteLength > bytesIn + 16 * j.bufferViews.length)
      throw new Error(`the buffer (${j.buffers[0].byteLength} bytes) holds more than its bufferViews (${bytesIn})`);
    // the oracle: gltf-transform's decoders on the compressed file
    const io = new NodeIO().registerExtensions(ALL_EXTENSIONS).registerDependencies({
      'draco3d.decoder': await draco3d.createDecoderModule(),
      'meshopt.decoder': MeshoptDecoder,
    });
    await MeshoptDecoder.ready;
    const want = await primitives(io, oracle), got = await primitives(new NodeIO().registerExtensions(ALL_EXTENSIONS), plain);
    if (want.length !== got.length) throw new Error(`${got.length} primitives, expected ${want.length}`);
    // Meshopt's octahedral filter (normals, tangents) rounds differently by one
    // unit in the Debian libmeshoptimizer (0.18) and npm's (1.x); every other
    // value, and everything Draco decodes, must be equal.
    let values = 0, rounded = 0;
    for (let p = 0; p < want.length; p++) {
      const semantics = Object.keys(want[p].attrs).sort();
      if (semantics.join() !== Object.keys(got[p].attrs).sort().join())
        throw new Error(`primitive ${p}: attributes ${Object.keys(got[p].attrs)} vs ${semantics}`);
      for (const s of semantics) {
        const a = want[p].attrs[s], b = got[p].attrs[s];
        if (a.getComponentType() !== b.getComponentType() || a.getNormalized() !== b.getNormalized())
          throw new Error(`primitive ${p} ${s}: component type changed`);
        const filtered = base === 'meshopt' && /^(NORMAL|TANGENT)$/.test(s) && a.getNormalized();
        rounded += sameArrays(a.getArray(), b.getArray(), `primitive ${p} ${s}`, filtered ? 1 : 0);
        values += a.getArray().length;
      }
      if (want[p].indices) sameArrays(want[p].indices, got[p].indices, `primitive ${p} indices`);
    }
    // the job itself on the compressed file
    const fixed = path.join(tmp, `wolf_${kind}.fixed.glb`), rep = path.join(tmp, `wolf_${kind}.json`);
    execFileSync(cli, ['fix', '-q', packed, '-o', fixed, '--report', rep]);
    const kinds = JSON.parse(fs.readFileSync(rep)).appendages.map((a) => a.kind);
    if (!kinds.includes('tail')) throw new Error(`fix found no tail (${kinds})`);
    const sizes = `${fs.statSync(packed).size} -> ${fs.statSync(plain).size} bytes`;
    console.log(`ok   ${name}: ${want.length} primitives, ${values} values equal to gltf-transform's decoding` +
      (rounded ? ` (${rounded} filtered normal/tangent components one unit apart)` : '') + '; ' +
      `validator ${report.issues.numErrors}E/${report.issues.numWarnings}W; ${sizes}; fix found the tail`);
    passed++;
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message}`);
    failed++;
  }
}

await check('draco', 'KHR_draco_mesh_compression');
await check('meshopt', 'EXT_meshopt_compression');
await check('meshopt-khr', 'KHR_meshopt_compression');
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
