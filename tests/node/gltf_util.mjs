// Shared by the Node tests: a GLB without textures, so three.js can load it
// in Node (it cannot decode images there; images move no vertex). Materials
// keep everything else; texture extensions are dropped from the lists.
export function stripTextures(buf) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const jsonLen = dv.getUint32(12, true);
  const json = JSON.parse(new TextDecoder().decode(buf.subarray(20, 20 + jsonLen)));
  const rest = buf.subarray(20 + jsonLen);
  delete json.textures; delete json.images; delete json.samplers;
  const scrub = (o) => {
    if (!o || typeof o !== 'object') return;
    for (const k of Object.keys(o)) { if (/Texture$/.test(k)) delete o[k]; else scrub(o[k]); }
  };
  scrub(json.materials);
  for (const key of ['extensionsUsed', 'extensionsRequired'])
    if (json[key]) json[key] = json[key].filter((e) => !/texture/i.test(e));
  const text = new TextEncoder().encode(JSON.stringify(json));
  const chunk = new Uint8Array(text.length + ((4 - (text.length % 4)) % 4)).fill(0x20);
  chunk.set(text);
  const out = new Uint8Array(20 + chunk.length + rest.length);
  const o = new DataView(out.buffer);
  o.setUint32(0, 0x46546c67, true); o.setUint32(4, 2, true); o.setUint32(8, out.length, true);
  o.setUint32(12, chunk.length, true); o.setUint32(16, 0x4e4f534a, true);
  out.set(chunk, 20); out.set(rest, 20 + chunk.length);
  return out.buffer;
}
