// The preview page in a real browser (headless Chromium driven by the pinned
// puppeteer-core, no network): `tailbone fix --preview` writes the page of the
// synthetic leg-weighted fox and its repair; the page loads without console
// errors and makes no request, both characters render (screenshot saved to
// build/tests/artefacts/preview.png), clips switch, the WASM spring's tail
// tips agree with the C runtime's (tests/preview_ref.c: the same
// web/preview_core.c natively, the file loaded by the offline layer) within
// 1e-4 of the tail length, the clip figures shown equal `tailbone measure`'s
// to two decimals, and sliders change the motion (and the fix command line).
// Skips (77) with a message when no Chromium is installed or when tailbone
// was built without the page (no emscripten).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const cli = process.env.TB_CLI, ref = process.env.TB_PREVIEW_REF;
const tmpRoot = process.env.TB_TMP || '/tmp';
fs.mkdirSync(tmpRoot, { recursive: true });
const tmp = fs.mkdtempSync(path.join(tmpRoot, 'preview-'));
const artefacts = path.resolve(tmpRoot, '..', 'artefacts');
let passed = 0, failed = 0;
// what it measured, for `make figures` (block preview-browser): TB_SUMMARY_JSON names the file
const summary = {};
const t0 = Date.now(), at = () => `[${((Date.now() - t0) / 1000).toFixed(1)} s] `;
const ok = (cond, msg) => { if (cond) { passed++; console.log('ok   ' + at() + msg); } else { failed++; console.log('FAIL ' + at() + msg); } };
const skip = (why) => { console.log('SKIP node_preview: ' + why); process.exit(77); };

const chromium = [process.env.TB_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']
  .find((p) => p && fs.existsSync(p));
if (!chromium) skip('no Chromium found (apt-get install chromium; scripts/setup.sh installs it, TB_CHROMIUM names another)');
let puppeteer;
try { puppeteer = (await import('puppeteer-core')).default; } catch { skip('npm package puppeteer-core missing (npm ci)'); }

const run = (args) => execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const fox = path.join(tmp, 'fox.glb'), fixed = path.join(tmp, 'fox_fixed.glb'), page = path.join(tmp, 'fox.html');
run(['synth', '--variant', 'tail_leg', '-o', fox]);
try {
  run(['fix', fox, '-o', fixed, '--preview', page, '-q']);
} catch (e) {
  const msg = String(e.stderr || e);
  if (/built without the preview page/.test(msg)) skip(msg.trim());
  throw e;
}
ok(fs.existsSync(page), `fix --preview wrote the page (${(fs.statSync(page).size / 1e6).toFixed(2)} MB)`);

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--enable-unsafe-swiftshader', '--use-angle=swiftshader', '--ignore-gpu-blocklist',
    '--disable-background-networking', '--no-first-run'],
});
const errors = [], requests = [];
async function open(file) {
  const p = await browser.newPage();
  await p.setViewport({ width: 960, height: 540 });
  p.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(`${path.basename(file)}: console ${m.type()}: ${m.text()}`); });
  p.on('pageerror', (e) => errors.push(`${path.basename(file)}: ${e.message}`));
  await p.setRequestInterception(true);
  p.on('request', (r) => {
    const u = r.url();
    if (u.startsWith('file:') || u.startsWith('data:') || u.startsWith('blob:')) r.continue();
    else { requests.push(u); r.abort(); }
  });
  await p.goto('file://' + file);
  await p.waitForFunction('window.tbPreview && window.tbPreview.ready', { timeout: 60000 });
  return p;
}
const frames = (p, n = 3) => p.evaluate((n) => new Promise((res) => {
  const f = () => (n-- > 0 ? requestAnimationFrame(f) : res());
  f();
}), n);

try {
  const p = await open(page);
  await p.evaluate(() => { tbPreview.pause(); tbPreview.seek(0.25); });
  await frames(p);

  // both characters drawn: bright (skin, bones) pixels in each half of the view
  const cover = await p.evaluate(() => {
    const c = document.querySelector('#view3d canvas');
    const t = document.createElement('canvas');
    t.width = c.width; t.height = c.height;
    const g = t.getContext('2d');
    g.drawImage(c, 0, 0);
    const d = g.getImageData(0, 0, t.width, t.height).data;
    const halves = [0, 0];
    for (let y = 0; y < t.height; y++)
      for (let x = 0; x < t.width; x++) {
        const i = (y * t.width + x) * 4;
        if (0.3 * d[i] + 0.59 * d[i + 1] + 0.11 * d[i + 2] > 140) halves[x < t.width / 2 ? 0 : 1]++;
      }
    return halves.map((n) => n / (t.width * t.height / 2));
  });
  ok(cover[0] > 0.01 && cover[1] > 0.01, `both characters render: ${(100 * cover[0]).toFixed(1)}% / ${(100 * cover[1]).toFixed(1)}% of each half lit`);
  fs.mkdirSync(artefacts, { recursive: true });
  await p.screenshot({ path: path.join(artefacts, 'preview.png') });
  fs.copyFileSync(page, path.join(artefacts, 'preview.html'));
  console.log(`     screenshot: ${path.join(artefacts, 'preview.png')}`);

  // the figures shown equal tailbone measure's (24 instants), two clips, both files
  const clips = await p.evaluate(() => tbPreview.clips);
  ok(clips.length >= 2, `clip picker lists ${clips.length} clips`);
  for (const clip of clips.slice(0, 2)) {
    await p.select('#clip', clip);
    await frames(p);
    ok(await p.evaluate(() => tbPreview.clip()) === clip, `clip switched to ${clip}`);
    for (const [role, file] of [['original', fox], ['repaired', fixed]]) {
      const m = JSON.parse(run(['measure', file, '--clip', clip, '--json'])).clips[0];
      const shown = await p.evaluate((role) => Object.fromEntries(
        [...document.querySelectorAll(`table.fig[data-role=${role}] td[data-k]`)].map((td) => [td.dataset.k, td.textContent])), role);
      const want = {
        tail_p95: m.tail.p95.toFixed(2), tail_p99: m.tail.p99.toFixed(2), tail_max: m.tail.max.toFixed(2),
        tail_torn: (100 * m.tail.torn_fraction).toFixed(1) + '%', body_p95: m.body.p95.toFixed(2),
        body_p99: m.body.p99.toFixed(2), body_max: m.body.max.toFixed(2), body_torn: (100 * m.body.torn_fraction).toFixed(1) + '%',
      };
      const diff = Object.keys(want).filter((k) => shown[k] !== want[k]);
      ok(diff.length === 0, `${clip}, ${role}: figures shown = tailbone measure's (tail p99 ${shown.tail_p99}, max ${shown.tail_max}, torn ${shown.tail_torn})` +
        (diff.length ? ` — differ: ${diff.map((k) => `${k} ${shown[k]} vs ${want[k]}`).join(', ')}` : ''));
    }
  }
  // clips change the pose
  await p.select('#clip', clips[0]);
  await p.evaluate(() => tbPreview.seek(0.3));
  await frames(p);
  const a = await p.evaluate(() => tbPreview.positions('repaired'));
  await p.select('#clip', clips[1]);
  await p.evaluate(() => tbPreview.seek(0.3));
  await frames(p);
  const b = await p.evaluate(() => tbPreview.positions('repaired'));
  ok(a.some((v, i) => Math.abs(v - b[i]) > 1e-3), `${clips[0]} and ${clips[1]} pose the character differently`);

  // the WASM spring against the C runtime, same clip and parameters
  const compare = async (clip, label) => {
    const params = (await p.evaluate(() => tbPreview.params())).map((x) => Math.fround(x));
    const web = await p.evaluate((clip) => tbPreview.tips(clip, 60, 180), clip);
    const c = JSON.parse(execFileSync(ref, [fixed, clip, '60', '180', ...params.map(String)], { encoding: 'utf8' }));
    let worst = 0;
    for (let i = 0; i < c.tips.length; i++) worst = Math.max(worst, Math.abs(c.tips[i] - web.tips[i]));
    ok(web.links === c.links && web.tips.length === c.tips.length && c.links > 0 && worst <= 1e-4 * c.length,
      `${label}: WASM tail tips = C runtime's over 180 frames of ${clip} (${c.links} links, worst ${(worst / c.length).toExponential(1)} L)`);
    (summary.tips ||= []).push({ label, clip, links: c.links, worst_l: worst / c.length });
    return web;
  };
  const base = await compare(clips[0], 'baked parameters');

  // sliders change the motion and the command line
  const setSlider = (key, v) => p.evaluate((key, v) => {
    const el = document.getElementById('s-' + key);
    el.value = String(v);
    el.dispatchEvent(new Event('input'));
  }, key, v);
  await setSlider('root_hz', 2);
  await setSlider('gravity', 6);
  const moved = await compare(clips[0], 'root 2 Hz, gravity 6');
  let change = 0;
  for (let i = 0; i < base.tips.length; i++) change = Math.max(change, Math.abs(base.tips[i] - moved.tips[i]));
  ok(change > 0.01 * base.length, `sliders change the tail's motion (tips move up to ${(change / base.length).toFixed(2)} L)`);
  summary.slider_change_l = change / base.length;
  const cmd = await p.evaluate(() => tbPreview.command());
  ok(/--root-hz 2\b/.test(cmd) && /--gravity 6\b/.test(cmd) && !/--damping/.test(cmd), `command line: ${cmd}`);
  // that command line runs and bakes
  const argv = cmd.split(' ').slice(1).map((s) => s.replace(/^'|'$/g, ''));
  const o = argv.indexOf('-o');
  argv[o + 1] = path.join(tmp, 'fox_slider.glb');
  run([...argv, '-q']);
  ok(fs.existsSync(argv[o + 1]), 'the page\'s fix command line runs');

  // live spring plays without errors and moves the tail between frames
  await p.click('#mode-live');
  await p.click('#play');
  await frames(p, 20);
  const l1 = await p.evaluate(() => tbPreview.positions('repaired'));
  await frames(p, 10);
  const l2 = await p.evaluate(() => tbPreview.positions('repaired'));
  ok(l1.some((v, i) => Math.abs(v - l2[i]) > 1e-4), 'live spring: the repaired character moves while playing');

  // runtime frame time in this browser (pose + spring + skinning + stretch + colours, one character)
  const ms = await p.evaluate(() => tbPreview.benchmark(300, 'repaired', true));
  const vcount = (await p.evaluate(() => tbPreview.positions('repaired'))).length / 3;
  console.log(`     frame time (WASM spring + skinning + stretch colouring, ${vcount} vertices, headless Chromium): ${ms.toFixed(2)} ms`);

  // one file alone: the repaired one, shown alone
  const single = path.join(tmp, 'single.html');
  run(['preview', fixed, '-o', single]);
  const q = await open(single);
  ok(await q.evaluate(() => Object.keys(tbPreview.stats()).join()) === 'repaired', 'one file alone: the page shows it alone');
} finally {
  await browser.close();
}
ok(errors.length === 0, `no console errors or warnings${errors.length ? ': ' + errors.join(' | ') : ''}`);
ok(requests.length === 0, `no network request${requests.length ? ': ' + requests.join(', ') : ''}`);
console.log(`${passed} passed, ${failed} failed`);
if (process.env.TB_SUMMARY_JSON && !failed) fs.writeFileSync(process.env.TB_SUMMARY_JSON, JSON.stringify(summary, null, 1));
process.exit(failed ? 1 : 0);
