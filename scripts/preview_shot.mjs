// preview_shot.mjs — a picture of one instant of a `tailbone preview` page
// (or `fix --preview`), taken in headless Chromium: what the skin looks like
// in motion, coloured by its stretch, where the figures alone say little.
//
//   node scripts/preview_shot.mjs PAGE.html OUT.png [options]
//     --clip NAME      the clip (default: the page's first)
//     --time S         the instant, seconds into the clip (default 0)
//     --show WHICH     both | original | repaired (default both)
//     --orbit DX[,DY]  turn the camera: a drag of DX (and DY) pixels
//     --zoom N[@X,Y]   N wheel steps in, towards the pixel X,Y (default the view's centre)
//     --size W,H       the window (default 1280,800); the picture is the 3D view alone
//
// Prints the frame's figures (tail and body p99 / max / torn, as the page's
// labels) per character shown. Needs Chromium (scripts/setup.sh installs it)
// and the npm packages (npm ci). Exit status 2 on a usage error.
import fs from 'node:fs';
import puppeteer from 'puppeteer-core';

const usage = () => {
  console.error('usage: node scripts/preview_shot.mjs PAGE.html OUT.png [--clip NAME] [--time S] ' +
    '[--show both|original|repaired] [--orbit DX[,DY]] [--zoom N[@X,Y]] [--size W,H]');
  process.exit(2);
};
const argv = process.argv.slice(2);
if (argv.length < 2) usage();
const [page, out] = argv;
const opt = { clip: null, time: 0, show: 'both', orbit: [0, 0], zoom: 0, zoomAt: null, size: [1280, 800] };
const nums = (s) => s.split(',').map(Number);
for (let i = 2; i < argv.length; i += 2) {
  const k = argv[i], v = argv[i + 1];
  if (v === undefined) usage();
  if (k === '--clip') opt.clip = v;
  else if (k === '--time') opt.time = Number(v);
  else if (k === '--show') opt.show = v;
  else if (k === '--orbit') opt.orbit = [nums(v)[0] || 0, nums(v)[1] || 0];
  else if (k === '--zoom') { const [n, at] = v.split('@'); opt.zoom = Number(n); opt.zoomAt = at ? nums(at) : null; }
  else if (k === '--size') opt.size = nums(v);
  else usage();
}
if (!['both', 'original', 'repaired'].includes(opt.show) || !Number.isFinite(opt.time)) usage();
if (!fs.existsSync(page)) { console.error(`preview_shot: ${page}: no such file`); process.exit(1); }
const chromium = [process.env.TB_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && fs.existsSync(p));
if (!chromium) { console.error('preview_shot: no Chromium found (scripts/setup.sh installs it; TB_CHROMIUM names another)'); process.exit(1); }

const browser = await puppeteer.launch({
  executablePath: chromium, headless: true,
  args: ['--no-sandbox', '--enable-unsafe-swiftshader', '--use-angle=swiftshader', '--ignore-gpu-blocklist', '--no-first-run'],
});
const settle = (ms) => new Promise((r) => setTimeout(r, ms));
try {
  const p = await browser.newPage();
  await p.setViewport({ width: opt.size[0], height: opt.size[1] });
  await p.goto('file://' + fs.realpathSync(page));
  await p.waitForFunction('window.tbPreview && window.tbPreview.ready', { timeout: 60000 });
  const clips = await p.evaluate(() => tbPreview.clips);
  const clip = opt.clip || clips[0];
  if (!clips.includes(clip)) throw new Error(`no clip '${clip}' in the page (it has: ${clips.join(', ')})`);
  await p.evaluate((clip, show) => {
    const set = (id, v) => { const s = document.getElementById(id); s.value = v; s.dispatchEvent(new Event('change')); };
    set('clip', clip);
    set('show', show);
    tbPreview.pause();
  }, clip, opt.show);
  const box = await p.evaluate(() => { const r = document.getElementById('view3d').getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; });
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  if (opt.orbit[0] || opt.orbit[1]) {
    await p.mouse.move(cx, cy);
    await p.mouse.down();
    for (let i = 1; i <= 20; i++) await p.mouse.move(cx + (opt.orbit[0] * i) / 20, cy + (opt.orbit[1] * i) / 20);
    await p.mouse.up();
  }
  const [zx, zy] = opt.zoomAt || [cx, cy];
  for (let i = 0; i < opt.zoom; i++) {
    await p.mouse.move(zx, zy);
    await p.mouse.wheel({ deltaY: -200 });
    await settle(30);
  }
  await p.evaluate((t) => tbPreview.seek(t), opt.time);
  await settle(500);
  await p.screenshot({ path: out, clip: box });
  const stats = await p.evaluate(() => tbPreview.stats());
  for (const [role, s] of Object.entries(stats)) {
    if (!s || (opt.show !== 'both' && role !== opt.show)) continue;
    console.log(`${role}: ${clip} at ${opt.time.toFixed(2)} s: tail p99 ${s[0].toFixed(2)} max ${s[1].toFixed(2)} ` +
      `torn ${s[2]} / ${s[3]}; body p99 ${s[4].toFixed(2)} max ${s[5].toFixed(2)} torn ${s[6]} / ${s[7]}`);
  }
  console.log(`preview_shot: wrote ${out}`);
} catch (e) {
  console.error(`preview_shot: ${page}: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
