// The preview page (tailbone preview): three.js draws what the tailbone
// runtime computes. Every number — pose, spring, skinning, stretch — comes
// from web/preview_core.c and src/runtime compiled to WebAssembly; this file
// only moves arrays into the WASM heap, draws them and wires the controls.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import createModule from 'tailbone-wasm';

const DEG = Math.PI / 180;
const $ = (id) => document.getElementById(id);

function b64bytes(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
const f32 = (s) => new Float32Array(b64bytes(s).buffer);
const i32 = (s) => new Int32Array(b64bytes(s).buffer);

// SPEC B sliders: what fix calls them, the range an artist needs, and how a
// slider value becomes the solver's parameter (scene units, TB_SPRING_ZERO).
const SLIDERS = [
  { key: 'root_hz', label: 'root frequency', unit: 'Hz', min: 0.1, max: 4, step: 0.05, opt: '--root-hz' },
  { key: 'tip_ratio', label: 'tip ratio (tip frequency / root)', unit: '', min: 0.1, max: 2, step: 0.05, opt: '--tip-ratio' },
  { key: 'damping', label: 'damping ζ', unit: '', min: 0, max: 2, step: 0.05, opt: '--damping' },
  { key: 'gravity', label: 'gravity', unit: 'm/s²', min: 0, max: 20, step: 0.5, opt: '--gravity' },
  { key: 'carry', label: 'carry (lift back and up)', unit: '°', min: 0, max: 120, step: 1, opt: '--carry' },
  { key: 'bend_limit', label: 'bend limit per joint', unit: '°', min: 1, max: 180, step: 1, opt: '--bend-limit' },
  { key: 'coupling', label: 'bend coupling', unit: '/s', min: 0, max: 40, step: 0.5, opt: '--coupling' },
  { key: 'ground_y', label: 'ground height (scene units)', unit: '', min: -1, max: 1, step: 0.01, opt: '--ground-y' },
];

class Character {
  constructor(M, d) {
    this.M = M;
    this.d = d;
    this.role = d.role;
    const keep = [];
    const put = (arr) => {
      const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
      const p = M._malloc(Math.max(bytes.length, 4));
      M.HEAPU8.set(bytes, p);
      keep.push(p);
      return p;
    };
    const nj = d.names.length;
    const enc = new TextEncoder();
    const nameBytes = [];
    for (const n of d.names) { nameBytes.push(...enc.encode(n), 0); }
    this.nv = d.vertices;
    this.ptr = M._tb_pv_new(nj, put(new Int32Array(d.parents)), put(new Uint8Array(nameBytes)),
      put(f32(d.rest)), put(f32(d.bind_world)), put(new Uint8Array(d.has_ibm)),
      d.skin_joints.length, put(new Int32Array(d.skin_joints)), put(f32(d.ibm)),
      d.vertices, put(f32(d.positions)), put(f32(d.normals)), d.influences,
      put(new Uint16Array(b64bytes(d.joints).buffer)), put(f32(d.weights)),
      d.triangles, put(new Uint32Array(b64bytes(d.indices).buffer)), put(b64bytes(d.tail_mask)), d.height);
    if (!this.ptr) throw new Error(`${d.file}: the runtime refused the character`);
    this.clipIndex = new Map();
    for (const c of d.clips) {
      const meta = i32(c.meta), n = c.channels;
      const cj = new Int32Array(n), cp = new Int32Array(n), ci = new Int32Array(n), ck = new Int32Array(n);
      for (let k = 0; k < n; k++) { cj[k] = meta[k * 4]; cp[k] = meta[k * 4 + 1]; ci[k] = meta[k * 4 + 2]; ck[k] = meta[k * 4 + 3]; }
      const idx = M._tb_pv_add_clip(this.ptr, c.duration, n, put(cj), put(cp), put(ci), put(ck), put(f32(c.times)), put(f32(c.values)));
      if (idx < 0) throw new Error(`${d.file}: clip ${c.name} refused by the runtime`);
      this.clipIndex.set(c.name, idx);
    }
    this.chains = 0;
    if (d.spring) {
      this.desc = f32(d.spring.desc);
      this.spec = f32(d.spring.spec);
      this.units = d.spring.units_per_m;
      this.chains = M._tb_pv_spring(this.ptr, put(this.desc));
    }
    this.params = M._malloc(12 * 4);
    this.tipsBuf = 0;
    for (const p of keep) M._free(p);
    this.tailJoints = new Set(d.tail_joints);
    this.parents = d.parents;
    this.clipStats = new Map();
    this.buildScene(b64bytes(d.indices), f32(d.normals));
  }

  buildScene(indexBytes, normals) {
    const nv = this.nv;
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(nv * 3), 3));
    g.setAttribute('normal', new THREE.BufferAttribute(new Float32Array(nv * 3), 3));
    g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(nv * 3), 3));
    g.setIndex(new THREE.BufferAttribute(new Uint32Array(indexBytes.buffer), 1));
    this.hasNormals = normals.some((v) => v !== 0);
    this.geometry = g;
    this.mesh = new THREE.Mesh(g, new THREE.MeshStandardMaterial({
      vertexColors: true, roughness: 0.75, metalness: 0, side: THREE.DoubleSide }));
    this.mesh.frustumCulled = false;
    // skeleton: a line from each joint to its parent; Tail_* bright orange
    const nj = this.parents.length;
    const segs = [], cols = [];
    for (let j = 0; j < nj; j++) {
      if (this.parents[j] < 0) continue;
      segs.push(j, this.parents[j]);
      const c = this.tailJoints.has(j) ? [1, 0.45, 0] : [0.55, 0.8, 1];
      cols.push(...c, ...c);
    }
    this.segs = segs;
    const lg = new THREE.BufferGeometry();
    lg.setAttribute('position', new THREE.BufferAttribute(new Float32Array(segs.length * 3), 3));
    lg.setAttribute('color', new THREE.BufferAttribute(new Float32Array(cols), 3));
    this.bones = new THREE.LineSegments(lg, new THREE.LineBasicMaterial({
      vertexColors: true, depthTest: false, transparent: true, opacity: 0.95 }));
    this.bones.renderOrder = 10;
    this.bones.frustumCulled = false;
    const pg = new THREE.BufferGeometry();
    pg.setAttribute('position', lg.getAttribute('position'));
    pg.setAttribute('color', lg.getAttribute('color'));
    this.joints = new THREE.Points(pg, new THREE.PointsMaterial({
      vertexColors: true, size: 5, sizeAttenuation: false, depthTest: false, transparent: true }));
    this.joints.renderOrder = 11;
    this.joints.frustumCulled = false;
    this.group = new THREE.Group();
    this.group.add(this.mesh, this.bones, this.joints);
  }

  // clip stats as tailbone measure: 24 instants, keys
  clipFigures(name) {
    if (!this.clipStats.has(name)) {
      const M = this.M, out = M._malloc(12 * 4);
      M._tb_pv_clip_stats(this.ptr, this.clipIndex.has(name) ? this.clipIndex.get(name) : -1, 24, out);
      this.clipStats.set(name, Array.from(new Float32Array(M.HEAPF32.buffer, out, 12)));
      M._free(out);
    }
    return this.clipStats.get(name);
  }

  setParams(p) {
    this.M.HEAPF32.set(p, this.params >> 2);
    return this.M._tb_pv_set_params(this.ptr, this.params);
  }

  frame(clipName, t, live, dt, paint) {
    const M = this.M;
    const clip = this.clipIndex.has(clipName) ? this.clipIndex.get(clipName) : -1;
    M._tb_pv_frame(this.ptr, clip, t, live ? 1 : 0, dt);
    const nv = this.nv;
    const g = this.geometry;
    g.attributes.position.array.set(new Float32Array(M.HEAPF32.buffer, M._tb_pv_positions(this.ptr), nv * 3));
    g.attributes.position.needsUpdate = true;
    if (this.hasNormals) {
      g.attributes.normal.array.set(new Float32Array(M.HEAPF32.buffer, M._tb_pv_normals(this.ptr), nv * 3));
      g.attributes.normal.needsUpdate = true;
    } else {
      g.computeVertexNormals();
    }
    const col = g.attributes.color.array;
    if (paint) col.set(new Float32Array(M.HEAPF32.buffer, M._tb_pv_colors(this.ptr), nv * 3));
    else col.fill(0.78);
    g.attributes.color.needsUpdate = true;
    const w = new Float32Array(M.HEAPF32.buffer, M._tb_pv_world(this.ptr), this.parents.length * 16);
    const lp = this.bones.geometry.attributes.position.array;
    for (let i = 0; i < this.segs.length; i++) {
      const j = this.segs[i];
      lp[i * 3] = w[j * 16 + 12]; lp[i * 3 + 1] = w[j * 16 + 13]; lp[i * 3 + 2] = w[j * 16 + 14];
    }
    this.bones.geometry.attributes.position.needsUpdate = true;
    this.stats = Array.from(new Float32Array(M.HEAPF32.buffer, M._tb_pv_stats(this.ptr), 12));
  }

  // Live spring from rest over `frames` frames at fps: every link's tip.
  tips(clipName, fps, frames) {
    const M = this.M;
    const links = M._tb_pv_link_count(this.ptr);
    const buf = M._malloc(links * 3 * frames * 4);
    const clip = this.clipIndex.has(clipName) ? this.clipIndex.get(clipName) : -1;
    M._tb_pv_tips(this.ptr, clip, fps, frames, buf);
    const out = Array.from(new Float32Array(M.HEAPF32.buffer, buf, links * 3 * frames));
    M._free(buf);
    return { links, length: M._tb_pv_tail_length(this.ptr), tips: out };
  }

  bounds() {
    const b = new THREE.Box3();
    this.geometry.computeBoundingBox();
    b.copy(this.geometry.boundingBox);
    return b;
  }
}

const fmt = (v, d = 2) => (Number.isFinite(v) ? v.toFixed(d) : '–');

async function main() {
  const data = JSON.parse($('tb-data').textContent);
  const M = await createModule();
  const chars = data.characters.map((d) => new Character(M, d));
  const byRole = Object.fromEntries(chars.map((c) => [c.role, c]));
  const rep = byRole.repaired;
  document.title = `tailbone preview — ${chars.map((c) => c.d.file).join(' vs ')}`;
  $('bar').querySelector('.title').textContent = 'tailbone preview';

  // clips: the names of the first character, then any the other adds
  const clipNames = [];
  for (const c of chars) for (const k of c.d.clips) if (!clipNames.includes(k.name)) clipNames.push(k.name);
  const sel = $('clip');
  for (const n of clipNames) sel.add(new Option(n, n));
  if (!clipNames.length) sel.add(new Option('(no clips: bind pose)', ''));
  const walk = clipNames.findIndex((n) => /walk/i.test(n));
  if (walk >= 0) sel.selectedIndex = walk;
  if (chars.length < 2) $('show').disabled = true;

  // scene
  const host = $('view3d');
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  host.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0x2b2f35);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x404048, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(1, 2, 1.5);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.enableDamping = true;

  let clip = sel.value, t = 0, playing = true, live = false;
  const paint = () => $('paint').checked;
  for (const c of chars) { c.frame(clip, 0, false, 0, true); scene.add(c.group); }

  // layout: side by side along X, one grid under each, camera framing both
  const boxes = chars.map((c) => c.bounds());
  const size = new THREE.Vector3();
  boxes[0].getSize(size);
  const h = Math.max(size.y, size.x, size.z, 1e-3);
  const gap = Math.max(size.x, 0.6 * h) * 1.25;
  const grids = [];
  chars.forEach((c, i) => {
    // the camera looks from behind (tails!): +X is on screen left, so the
    // original (first) goes to +X and reads left of the repaired one
    c.offset = chars.length > 1 ? (0.5 - i) * gap : 0;
    c.group.position.x = c.offset;
    const center = new THREE.Vector3();
    boxes[i].getCenter(center);
    c.group.position.x -= center.x;
    c.group.position.z = -center.z;
    const grid = new THREE.GridHelper(h * 1.6, 16, 0x6a7078, 0x42474e);
    grid.position.set(c.offset, boxes[i].min.y, 0);
    scene.add(grid);
    grids.push(grid);
    c.grid = grid;
  });
  const frameCamera = () => {
    const vis = chars.filter((c) => c.group.visible);
    // fit what is shown, seen three-quarters from behind and a little above
    const width = (vis.length > 1 ? gap : 0) + Math.max(size.x, size.z, 0.5 * h);
    const cy = boxes[0].min.y + size.y * 0.5;
    const cx = vis.reduce((a, c) => a + c.offset, 0) / Math.max(vis.length, 1);
    const tanv = Math.tan((camera.fov / 2) * DEG);
    const dist = 1.1 * Math.max((size.y / 2) / tanv, (width / 2) / (tanv * Math.max(camera.aspect, 0.1))) + size.z / 2;
    const dir = new THREE.Vector3(-0.35, 0.22, -1).normalize();
    controls.target.set(cx, cy, 0);
    camera.position.set(cx + dir.x * dist, cy + dir.y * dist, dir.z * dist);
    camera.near = h * 0.01; camera.far = h * 100;
    camera.updateProjectionMatrix();
  };
  frameCamera();

  // labels over each character
  const labels = chars.map((c) => {
    const el = document.createElement('div');
    el.className = 'label';
    el.dataset.role = c.role;
    $('labels').appendChild(el);
    return el;
  });

  // figures table (per clip: as tailbone measure, 24 instants, baked keys)
  const figures = () => {
    let html = '';
    for (const c of chars) {
      const s = c.clipFigures(clip);
      const pct = (v) => (Number.isFinite(v) ? (100 * v).toFixed(1) + '%' : '–');
      html += `<h3>${c.role}: ${c.d.file}</h3>
<table class="fig" data-role="${c.role}"><tr><th>clip, 24 instants</th><th>p95</th><th>p99</th><th>max</th><th>torn</th></tr>
<tr><td>tail</td><td data-k="tail_p95">${fmt(s[8])}</td><td data-k="tail_p99">${fmt(s[0])}</td><td data-k="tail_max" class="${s[1] > 1.5 ? 'bad' : ''}">${fmt(s[1])}</td><td data-k="tail_torn" class="${s[2] > 0 ? 'bad' : ''}">${pct(s[2])}</td></tr>
<tr><td>body</td><td data-k="body_p95">${fmt(s[9])}</td><td data-k="body_p99">${fmt(s[4])}</td><td data-k="body_max">${fmt(s[5])}</td><td data-k="body_torn">${pct(s[6])}</td></tr></table>
<div class="note">tail: ${c.d.tail_vertices} vertices (${c.d.tail_source}); the same figures as <code>tailbone measure ${c.d.file} --clip "${clip}"</code></div>`;
    }
    $('figures').innerHTML = html;
  };
  figures();

  // spring controls
  const sliderEls = {};
  let defaults = null, baked = null;
  if (rep && rep.chains > 0) {
    // sliders start where the keys were baked; options are written against the SPEC's defaults
    const toSliders = (d, u) => ({
      root_hz: d[0], tip_ratio: d[1], damping: Math.max(d[2], 0), gravity: Math.max(d[3], 0) / u,
      carry: Math.max(d[4], 0) / DEG, bend_limit: Math.min(d[7] / DEG, 180), coupling: Math.max(d[6], 0), ground_y: d[8],
    });
    const d = rep.desc, u = rep.units;
    defaults = toSliders(rep.spec, u);
    baked = toSliders(d, u);
    const gy = SLIDERS.find((s) => s.key === 'ground_y');
    const span = Math.max(rep.d.height * M._tb_pv_world_scale(rep.ptr) * 0.5, 1e-3); // half the height, scene units
    gy.min = +(d[8] - span).toPrecision(3); gy.max = +(d[8] + span).toPrecision(3); gy.step = +(span / 100).toPrecision(2);
    for (const s of SLIDERS) {
      const div = document.createElement('div');
      div.className = 'slider';
      div.innerHTML = `<label for="s-${s.key}">${s.label}${s.unit ? ' (' + s.unit + ')' : ''}</label>
<input type="range" id="s-${s.key}" min="${s.min}" max="${s.max}" step="${s.step}"><output id="o-${s.key}"></output>`;
      $('sliders').appendChild(div);
      sliderEls[s.key] = div.querySelector('input');
      sliderEls[s.key].value = baked[s.key];
    }
    const gdiv = document.createElement('div');
    gdiv.innerHTML = '<label><input type="checkbox" id="s-ground" checked> ground plane (the tail rests on it)</label>';
    $('sliders').appendChild(gdiv);
    sliderEls.ground = gdiv.querySelector('input');
    sliderEls.ground.checked = !d[9];
  } else {
    $('spring-box').style.display = 'none';
  }
  const sliderValues = () => Object.fromEntries(SLIDERS.map((s) => [s.key, parseFloat(sliderEls[s.key].value)]));
  // the 12 solver parameters (tb_spring_params order, scene units)
  const params = () => {
    const v = sliderValues(), d = rep.desc, u = rep.units;
    return [v.root_hz, v.tip_ratio, v.damping > 0 ? v.damping : -1, v.gravity > 0 ? v.gravity * u : -1,
      v.carry > 0 ? v.carry * DEG : -1, d[5], v.coupling > 0 ? v.coupling : -1, v.bend_limit * DEG,
      v.ground_y, sliderEls.ground.checked ? 0 : 1, d[10], d[11]];
  };
  const num = (x) => String(+x.toFixed(4));
  const command = () => {
    const v = sliderValues();
    let cmd = data.command;
    for (const s of SLIDERS) {
      const differs = Math.abs(v[s.key] - defaults[s.key]) > s.step / 2; // a slider snaps to its step
      if (differs) cmd += ` ${s.opt} ${num(v[s.key])}`;
    }
    if (!sliderEls.ground.checked && !rep.spec[9]) cmd += ' --no-ground';
    return cmd;
  };
  const onSlider = () => {
    const v = sliderValues();
    for (const s of SLIDERS) $('o-' + s.key).textContent = num(v[s.key]);
    $('cmd').textContent = command();
    if (rep.setParams(params()) !== 0) $('cmd').textContent += '\n(the solver refused a value)';
    dirty = true;
  };
  let dirty = true;
  if (defaults) {
    for (const k of Object.keys(sliderEls)) sliderEls[k].addEventListener('input', onSlider);
    onSlider();
    $('reset').onclick = () => {
      for (const s of SLIDERS) sliderEls[s.key].value = defaults[s.key];
      sliderEls.ground.checked = !rep.spec[9];
      onSlider();
    };
    $('copy').onclick = () => {
      // a page opened from disk may have no clipboard API: select the text then
      window.getSelection().selectAllChildren($('cmd'));
      if (navigator.clipboard) navigator.clipboard.writeText($('cmd').textContent).catch(() => {});
      else document.execCommand('copy');
    };
    for (const r of document.querySelectorAll('input[name=mode]'))
      r.addEventListener('change', () => { live = $('mode-live').checked; if (live) rep.M._tb_pv_reset(rep.ptr); dirty = true; });
  }

  // files (download the GLBs carried by the page)
  $('files').innerHTML = chars.map((c) => {
    const blob = new Blob([b64bytes(c.d.glb)], { type: 'model/gltf-binary' });
    return `<div>${c.role}: <a download="${c.d.file}" href="${URL.createObjectURL(blob)}">${c.d.file}</a></div>`;
  }).join('');

  const duration = () => Math.max(0, ...chars.map((c) => (c.clipIndex.has(clip) ? M._tb_pv_clip_duration(c.ptr, c.clipIndex.get(clip)) : 0)));
  sel.onchange = () => { clip = sel.value; t = 0; figures(); if (rep) M._tb_pv_reset(rep.ptr); dirty = true; };
  const setPlaying = (p) => { playing = p; $('play').textContent = p ? '❚❚ pause' : '▶ play'; };
  $('play').onclick = () => setPlaying(!playing);
  window.addEventListener('keydown', (e) => { if (e.code === 'Space' && e.target.tagName !== 'INPUT') { e.preventDefault(); setPlaying(!playing); } });
  // scrubbing forward advances the live spring by the time scrubbed (at most
  // 0.1 s a step, as the solver caps it); backward holds the tail
  let scrubDt = 0;
  $('scrub').oninput = () => {
    setPlaying(false);
    const nt = ($('scrub').value / 1000) * duration();
    scrubDt = Math.max(0, nt - t);
    t = nt;
    dirty = true;
  };
  $('show').onchange = () => {
    const v = $('show').value;
    for (const c of chars) { c.group.visible = v === 'both' || v === c.role; c.grid.visible = c.group.visible; }
    frameCamera();
  };
  $('skel').onchange = () => { for (const c of chars) { c.bones.visible = c.joints.visible = $('skel').checked; } };
  $('paint').onchange = () => { dirty = true; };

  const resize = () => {
    const w = host.clientWidth, hh = host.clientHeight;
    renderer.setSize(w, hh, false);
    camera.aspect = w / Math.max(hh, 1);
    camera.updateProjectionMatrix();
  };
  window.addEventListener('resize', resize);
  resize();
  frameCamera();

  // per frame: pose (keys or live spring), skin, stretch, colours — all WASM
  let last = performance.now(), frameMs = 0, frames = 0, viewChanged = true;
  controls.addEventListener('change', () => { viewChanged = true; });
  for (const id of ['show', 'skel', 'paint']) $(id).addEventListener('change', () => { viewChanged = true; });
  window.addEventListener('resize', () => { viewChanged = true; });
  const step = (dt) => {
    const t0 = performance.now();
    for (const c of chars) c.frame(clip, t, c === rep && live, c === rep && live ? dt : 0, paint());
    frameMs += performance.now() - t0;
    frames++;
  };
  const updateLabels = () => {
    const rect = host.getBoundingClientRect();
    chars.forEach((c, i) => {
      const el = labels[i];
      el.classList.toggle('hidden', !c.group.visible);
      const s = c.stats;
      const tornT = s[2], tornB = s[6];
      const pose = !c.clipIndex.has(clip) ? ' · no such clip: stored pose' : c === rep && live ? ' · live spring' : '';
      el.innerHTML = `<div class="name">${c.role}${pose}</div>
<div>tail p99 <b data-k="tail_p99">${fmt(s[0])}</b> max <b data-k="tail_max">${fmt(s[1])}</b> torn <b data-k="tail_torn" class="${tornT ? 'torn' : ''}">${tornT}</b> / ${s[3]}</div>
<div>body p99 <b data-k="body_p99">${fmt(s[4])}</b> max <b data-k="body_max">${fmt(s[5])}</b> torn <b data-k="body_torn">${tornB}</b> / ${s[7]}</div>`;
      el.style.borderColor = tornT > 0 ? '#ff0' : '#444'; // a torn tail frames its label in yellow
      const shown = chars.filter((x) => x.group.visible);
      const k = shown.indexOf(c);
      el.style.left = `${rect.left + ((k + 0.5) / Math.max(shown.length, 1)) * rect.width}px`;
      el.style.top = `${rect.top + 8}px`;
    });
  };
  const loop = (now) => {
    const dt = Math.max(0, Math.min((now - last) / 1000, 0.1)) * parseFloat($('speed').value); // clip time
    last = now;
    const dur = duration();
    if (playing && dur > 0) {
      t += dt;
      if (t > dur) t %= dur;
      $('scrub').value = Math.round((t / dur) * 1000);
      step(dt);
    } else if (dirty) {
      step(scrubDt);
      scrubDt = 0;
    }
    // draw only when something changed: an idle page costs nothing
    const moved = controls.update();
    if (dirty || moved || viewChanged || (playing && dur > 0)) {
      $('time').textContent = `${t.toFixed(2)} / ${dur.toFixed(2)} s`;
      renderer.render(scene, camera);
      updateLabels();
    }
    dirty = false;
    viewChanged = false;
    if (frames && frames % 60 === 0)
      $('perf').textContent = `runtime per frame (pose, ${live ? 'spring, ' : ''}skinning, stretch, colours; both characters): ${(frameMs / frames).toFixed(2)} ms`;
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);

  // For the test suite (tests/node/preview.test.mjs) and the curious.
  window.tbPreview = {
    ready: true,
    clips: clipNames,
    params: () => (rep && rep.chains ? params() : null),
    command: () => $('cmd').textContent,
    tips: (name, fps, n) => rep.tips(name, fps, n),
    clip: () => clip,
    time: () => t,
    pause: () => setPlaying(false),
    seek: (s) => { t = s; dirty = true; },
    stats: () => Object.fromEntries(chars.map((c) => [c.role, c.stats])),
    positions: (role) => Array.from(byRole[role].geometry.attributes.position.array),
    // mean ms of the runtime's frame (pose, spring, skinning, stretch, colours) over n frames
    benchmark: (n, role = 'repaired', useLive = true) => {
      const c = byRole[role];
      const t0 = performance.now();
      for (let k = 0; k < n; k++) c.frame(clip, (k / 60) % Math.max(duration(), 1e-6), useLive, 1 / 60, true);
      return (performance.now() - t0) / n;
    },
  };
}

main().catch((e) => {
  $('error').textContent = 'The preview failed to start: ' + (e && e.stack ? e.stack : e);
  console.error(e);
});
