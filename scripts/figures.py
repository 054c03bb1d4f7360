#!/usr/bin/env python3
"""Deterministic figures in README.md and docs/ (`make figures`).

Each generated table sits between markers in its document:

    <!-- figures:NAME -->
    ... generated, do not edit by hand ...
    <!-- /figures:NAME -->

and is rebuilt here from the tool's own reports (`--json`, `--report`, the
synthetic truth files), never typed in. `make figures` rewrites the blocks;
`scripts/figures.py --check` (the CTest test `figures_current`) fails when a
committed block differs from a fresh run, printing the difference. Timings
are never figures here: they stay in bench output with machine and date.

  scripts/figures.py [--cli build/tailbone] [--check] [--only NAME,NAME]
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS_DIR = os.path.join(ROOT, 'build', 'tests')


def run(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'figures: tailbone {" ".join(args)} failed: {p.stderr.strip() or p.stdout[-500:]}')
    return p.stdout


def pct(x, digits=1):
    return f'{100 * x:.{digits}f}%'


def torn(x):
    """Torn fraction as the docs write it: 0%, < 0.05%, 0.4%."""
    if x == 0:
        return '0%'
    return '< 0.05%' if x < 0.0005 else f'{100 * x:.1f}%'


# ---- generators: each returns the block's text (markdown) -------------------

def readme_demo(cli, tmp):
    """README "Before and after": `tailbone measure --compare --json` on the
    demo character (synth tail_leg), Walk."""
    f = os.path.join(tmp, 'fox_broken.glb')
    run(cli, 'synth', '--variant', 'tail_leg', '-o', f)
    rep = json.loads(run(cli, 'measure', f, '--compare', '--clip', 'Walk', '--json'))
    c = rep['clips'][0]
    o, r, s = c['original'], c['rigid'], c['chain']
    rows = [('original rig', o), ('rigid on Hips', r), ('tail chain (spring)', s)]
    out = [f"Walk, {o['instants']} instants, {o['tail_vertices']:,} tail vertices, "
           f"{o['tail']['samples']:,} tail edge samples (`tailbone measure --compare --json`):", '',
           '| Walk | p95 | p99 | max | torn | bone distance | tip travel |', '|---|---|---|---|---|---|---|']
    for name, m in rows:
        t = m['tail']
        out.append(f"| {name} | {t['p95']:.2f} | {t['p99']:.2f} | {t['max']:.2f} | {torn(t['torn_fraction'])} | "
                   f"{pct(m['bone_distance_h'])} H | {pct(m['tip_travel_h'])} H |")
    b = o['body']
    out.append(f"| body, reference | {b['p95']:.2f} | {b['p99']:.2f} | {b['max']:.2f} | — | | |")
    return '\n'.join(out)


def fix_tail_leg(cli, tmp):
    """docs/fix.md: `tailbone fix --report` on synth tail_leg, every clip."""
    f = os.path.join(tmp, 'tail_leg.glb')
    run(cli, 'synth', '--variant', 'tail_leg', '-o', f)
    rp = os.path.join(tmp, 'tail_leg.report.json')
    run(cli, 'fix', f, '-o', os.path.join(tmp, 'tail_leg.fixed.glb'), '--report', rp, '-q')
    rep = json.load(open(rp))
    stretch = {s['clip']: s for s in rep['stretch']}
    search = ', '.join(f"{z['blend_zone']:.3g}: {z['torn_clips']}" for z in rep.get('blend_zone_search', []))
    out = [f'Blend-zone search (zone: clips torn): {search or "not run"}.', '',
           '| clip | keys | passes | closure | swing | tail p95 / p99 / max / torn | body p99 | tip travel |',
           '|---|---|---|---|---|---|---|---|']
    for c in rep['bake']['clips']:
        s = stretch.get(c['clip'])
        t = s['tail'] if s else None
        tail = f"{t['p95']:.2f} / {t['p99']:.2f} / {t['max']:.2f} / {torn(t['torn'])}" if t else '—'
        out.append(f"| {c['clip']} | {c['keys']} | {c['passes']} | {c['loop_closure_deg']:.2f}° | "
                   f"{c['swing_deg']:.1f}° | {tail} | {s['body']['p99']:.2f} | "
                   f"{100 * s['tip_travel_h']:.{0 if s['tip_travel_h'] >= 1 else 1}f}% H |"
                   if s else f"| {c['clip']} | {c['keys']} | {c['passes']} | | | — | | |")
    return '\n'.join(out)


def synth_detection(cli, tmp):
    """docs/detection.md: `tailbone detect --json` on every synthetic variant
    beside its truth file (class, K, length, vertex count)."""
    variants = [l.split()[0] for l in run(cli, 'synth', '--list').splitlines() if l.strip()]
    out = ['| variant | truth: class, K, vertices | detected: decision, K, L / H, vertices |', '|---|---|---|']
    for v in variants:
        f, tf = os.path.join(tmp, v + '.glb'), os.path.join(tmp, v + '.json')
        run(cli, 'synth', '--variant', v, '-o', f, '--truth', tf)
        truth = json.load(open(tf))
        det = json.loads(run(cli, 'detect', f, '--json'))
        acted = [a for a in det.get('appendages', []) if a.get('decision') in ('chain', 'rigid')]
        t = '; '.join(f"{a['class']}" + (f", K {a['K']}" if 'K' in a else '') + f", {a['vertex_count']:,}"
                      for a in truth['appendages']) or 'no appendage'
        d = '; '.join(f"{a['decision']}" + (f", K {a['bones']}, {a['length'] / det['height']:.3f}"
                                              if a['decision'] == 'chain' else '') + f", {a['vertex_count']:,}"
                      for a in acted) or 'nothing acted on'
        out.append(f'| {v} | {t} | {d} |')
    return '\n'.join(out)


def run_in(cli, cwd, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True, cwd=cwd)
    if p.returncode != 0:
        sys.exit(f'figures: tailbone {" ".join(args)} failed: {p.stderr.strip()}')
    return p.stdout


def measure_example(cli, tmp):
    """docs/measure.md "Output": `tailbone measure` as printed, on synth
    tail_leg."""
    run_in(cli, tmp, 'synth', '--variant', 'tail_leg', '-o', 'fox.glb')
    text = run_in(cli, tmp, 'measure', 'fox.glb', '--clip', 'Walk')
    return ('```\n$ tailbone synth --variant tail_leg -o fox.glb && tailbone measure fox.glb --clip Walk\n'
            + text.rstrip('\n') + '\n```')


def measure_compare_example(cli, tmp):
    """docs/measure.md: `tailbone measure --compare` with the truth's tail
    vertices as the mask."""
    run_in(cli, tmp, 'synth', '--variant', 'tail_leg', '-o', 'fox.glb', '--truth', 'fox.json')
    truth = json.load(open(os.path.join(tmp, 'fox.json')))
    with open(os.path.join(tmp, 'mask.txt'), 'w') as f:
        f.write(' '.join(str(v) for v in truth['appendages'][0]['vertices']))
    text = run_in(cli, tmp, 'measure', 'fox.glb', '--clip', 'Walk', '--compare', '--tail-mask', 'mask.txt')
    return ('```\n$ tailbone measure fox.glb --clip Walk --compare --tail-mask mask.txt\n'
            + text.rstrip('\n') + '\n```')



# ---- corpus blocks: need ../shared/corpus (skipped, logged, or failed with
# TB_REQUIRE_CORPUS=1 when it is absent) -------------------------------------

class NeedsCorpus(Exception):
    pass


def corpus(rel):
    d = os.environ.get('TB_SHARED_DIR') or os.path.join(ROOT, '..', 'shared')
    f = os.path.join(d, 'corpus', rel)
    if not os.path.exists(f):
        raise NeedsCorpus(f)
    return f


def signed(x, digits=3):
    return ('+' if x >= 0 else '−') + f'{abs(x):.{digits}f}'


def clip_label(lib, name):
    short = name.split('|')[-1]
    if short.endswith('_Armature'):
        short = short[:-len('_Armature')]
    return f'{lib} {short}'


LIBS = [('Xbot', 'clips/Xbot_agree_run_walk.glb', 'run,walk'),
        ('Soldier', 'clips/threejs_Soldier_rexport.glb', 'Idle,Run,Walk')]


def detection_corpus(cli, tmp):
    """docs/detection.md "Measured": `tailbone fix --no-bake --json` on the
    corpus characters: what was acted on, L, K, distances, changed outside."""
    files = [('banter_Wolf', 'characters/banter_Wolf.glb'), ('banter_Bone_Demon', 'characters/banter_Bone_Demon.glb'),
             ('Xbot', 'clips/Xbot_agree_run_walk.glb'), ('Soldier', 'clips/threejs_Soldier_rexport.glb'),
             ('RobotExpressive', 'clips/threejs_RobotExpressive.glb')]
    out = ['| file | acted on: kind, vertices, attachment | L | K | bone distance before → after | changed outside |',
           '|---|---|---|---|---|---|']
    for label, rel in files:
        rep = json.loads(run(cli, 'fix', corpus(rel), '-o', os.path.join(tmp, label + '.glb'), '--no-bake', '--json'))
        acted = [a for a in rep['appendages'] if a.get('decision') in ('chain', 'rigid')]
        if not acted:
            out.append(f"| {label} | nothing chained, nothing rigid" + ('' if rep['changed'] else ' (file unchanged)')
                       + f" | | | | {rep.get('changed_outside', '—')} |")
        for a in acted:
            what = (f"{a['kind']} ({a['decision']}), {a['vertex_count']:,} v"
                    + (f", {a['pieces']} separate pieces" if a.get('pieces', 0) > 1 else '')
                    + f", on {a.get('parent') or a['attachment']}")
            k = a['bones'] if a['decision'] == 'chain' else '—'
            out.append(f"| {label} | {what} | {a['length']:.3g} | {k} | "
                       f"{a['distance_before']:.4f} → {a['distance_after']:.4f} | {rep['changed_outside']} |")
    return '\n'.join(out)


FIXTURE_ROW = re.compile(r'^(\S+)\s+(\S+)\s+(\d\.\d{3})\s+(\d\.\d{3})\s+(\d+)/(\d+)\s+(\d+)\s+(\d+)\s+(.*?)(\s+FAIL)?\s*$')


def fixture_table(cli, tmp):
    """docs/detection.md "Fixtures on real bodies": the table that
    test_fixtures prints (every fixture on every body, scored against its
    truth file), run fresh."""
    corpus('clips/Xbot_agree_run_walk.glb')
    corpus('clips/threejs_Soldier_rexport.glb')
    exe = os.path.join(TESTS_DIR, 'test_fixtures')
    if not os.path.exists(exe):
        sys.exit(f'figures: {exe} not built (make build)')
    env = dict(os.environ, TBT_FILTER='every_fixture_on_every_body_is_scored', TB_TMP=tmp)
    env.setdefault('TB_SHARED_DIR', os.path.join(ROOT, '..', 'shared'))
    p = subprocess.run([exe], capture_output=True, text=True, env=env, cwd=tmp)
    text = p.stdout + p.stderr
    rows = []
    for line in text.splitlines():
        m = FIXTURE_ROW.match(line)
        if m:
            rows.append(m.groups())
    if p.returncode != 0 or not rows:
        sys.exit(f'figures: test_fixtures failed or printed no table:\n{text[-2000:]}')
    out = ['| body | fixture | recall | precision | chains (got/want) | changed outside the truth tail (and its collar band) '
           '| changed in a welded tail\'s collar band | decisions |', '|---|---|---|---|---|---|---|---|']
    short = 0
    for body, fx, rec, prec, got, want, outside, collar, dec, fail in rows:
        short += bool(fail)
        out.append(f"| {body} | `{fx}` | {rec} | {prec} | {got}/{want} | {outside} | {collar} | {dec}"
                   + (' **short**' if fail else '') + ' |')
    out.append('')
    out.append(f'{len(rows) - short} of {len(rows)} meet the bar; the {short} **short** ones are listed in the '
               'test (`known_short`).')
    return '\n'.join(out)



def fix_bar_table(cli, tmp):
    """docs/fix.md "The bar, per fixture": the table that test_fix_bar prints
    (tb_fix_run with the defaults on every fixture tail found), run fresh."""
    corpus('clips/Xbot_agree_run_walk.glb')
    corpus('clips/threejs_Soldier_rexport.glb')
    exe = os.path.join(TESTS_DIR, 'test_fix_bar')
    if not os.path.exists(exe):
        sys.exit(f'figures: {exe} not built (make build)')
    env = dict(os.environ, TB_TMP=tmp)
    env.setdefault('TB_SHARED_DIR', os.path.join(ROOT, '..', 'shared'))
    p = subprocess.run([exe], capture_output=True, text=True, env=env, cwd=tmp)
    text = p.stdout + p.stderr
    rows = [line for line in text.splitlines() if line.startswith('| ') and not line.startswith('| body ')]
    summary = [line for line in text.splitlines() if ' found tails: ' in line]
    if p.returncode != 0 or not rows or not summary:
        sys.exit(f'figures: test_fix_bar failed or printed no table:\n{text[-2000:]}')
    out = ['| body | fixture | tail p99 / max | torn (tail or seam) | swing | largest bend | fit | bar |',
           '|---|---|---|---|---|---|---|---|'] + rows + ['', summary[0].strip() + '.']
    return '\n'.join(out)

def retarget_foot_contact(cli, tmp):
    """docs/retarget.md: lowest foot skin over the clip / mean |lowest foot
    skin − the source's, scaled| (m), from `tailbone retarget --report`,
    without and with --foot-contact."""
    chars = [('banter_Wolf', 'characters/banter_Wolf.glb'), ('banter_Bone_Demon', 'characters/banter_Bone_Demon.glb')]
    cells = {}
    order = []
    for cname, crel in chars:
        for lib, lrel, only in LIBS:
            for fc in (False, True):
                rp = os.path.join(tmp, 'rt.json')
                run(cli, 'retarget', corpus(crel), '--clips', corpus(lrel), '--only', only, '-o',
                    os.path.join(tmp, 'rt.glb'), '--report', rp, '-q', *(['--foot-contact'] if fc else []))
                for c in json.load(open(rp))['clips']:
                    key = clip_label(lib, c['name'])
                    if key not in order:
                        order.append(key)
                    g = c['grounding']
                    cells[key, cname, fc] = f"{signed(g['foot_min_y_low'])} / {g['foot_vs_source_mean']:.3f}"
    out = ['| clip | ' + ' | '.join(f'{c} as transferred | with foot contact' for c, _ in chars) + ' |',
           '|---|' + '---|---|' * len(chars)]
    for key in order:
        out.append(f'| {key} | ' + ' | '.join(f"{cells.get((key, c, False), '—')} | {cells.get((key, c, True), '—')}"
                                                for c, _ in chars) + ' |')
    return '\n'.join(out)


def fix_corpus_characters(cli, tmp):
    """docs/fix.md: `tailbone fix CHAR --clips LIB --only … --report` on the
    corpus characters."""
    chars = [('banter_Wolf', 'characters/banter_Wolf.glb'), ('banter_Bone_Demon', 'characters/banter_Bone_Demon.glb')]
    out = ['| character | clip | passes | closure | swing | tail p95 / p99 / max / torn | body p99 | tip travel |',
           '|---|---|---|---|---|---|---|---|']
    for cname, crel in chars:
        first = True
        for lib, lrel, _ in LIBS:
            rp = os.path.join(tmp, 'fix.json')
            run(cli, 'fix', corpus(crel), '--clips', corpus(lrel), '--only', 'walk,run', '-o',
                os.path.join(tmp, 'fix.glb'), '--report', rp, '-q')
            rep = json.load(open(rp))
            chain = [a for a in rep['appendages'] if a.get('decision') == 'chain']
            stretch = {s['clip']: s for s in rep['stretch']}
            for c in rep['bake']['clips']:
                s = stretch.get(c['clip'])
                head = ''
                if first:
                    a = chain[0] if chain else None
                    head = (f"{cname} (K = {a['bones']}, {a['pieces']} pieces, on {a['parent']})" if a else cname)
                    first = False
                t = s['tail'] if s else None
                tail = f"{t['p95']:.2f} / {t['p99']:.2f} / {t['max']:.2f} / {torn(t['torn'])}" if t else '—'
                out.append(f"| {head} | {clip_label(lib, c['clip'])} | {c['passes']}{' W' if c.get('wraps') else ''} | "
                           f"{c['loop_closure_deg']:.2f}° | {c['swing_deg']:.1f}° | {tail} | "
                           + (f"{s['body']['p99']:.2f} | {pct(s['tip_travel_h'])} H |" if s else '| |'))
    return '\n'.join(out)


def fix_bake_existing(cli, tmp):
    """docs/fix.md "Existing tail chains": `tailbone fix --bake-existing
    --report` on the corpus foxes."""
    out = ['| file, clip | loop | closure | swing | tail p99 / torn | seam torn |', '|---|---|---|---|---|---|']
    for name in ('khronos_Fox', 'quaternius_Fox'):
        rp = os.path.join(tmp, 'be.json')
        run(cli, 'fix', corpus(f'reference/{name}.glb'), '--bake-existing', '-o', os.path.join(tmp, 'be.glb'),
            '--report', rp, '-q')
        rep = json.load(open(rp))
        stretch = {s['clip']: s for s in rep.get('stretch', [])}
        for c in rep['bake']['clips']:
            s = stretch.get(c['clip'])
            loop = ('W' if c.get('wraps') else 'L') if c.get('looping') else 'not detected as a loop'
            seam = s.get('seam') if s else None
            out.append(f"| {name} {c['clip'].split('|')[-1]} | {loop} | {c['loop_closure_deg']:.2f}° | {c['swing_deg']:.1f}° | "
                       + (f"{s['tail']['p99']:.2f} / {torn(s['tail']['torn'])} | " if s else '— | ')
                       + (f"{torn(seam['torn'])} |" if seam else '— |'))
    return '\n'.join(out)


def fix_variants(cli, tmp):
    """docs/fix.md: `tailbone fix VARIANT --report` on every synthetic
    variant with a tail, all clips baked."""
    variants = [l.split()[0] for l in run(cli, 'synth', '--list').splitlines() if l.strip()]
    out = ['| variant | weights | Walk (body p99) | Sprint (body p99) | still torn | past p99 1.18 / max 1.30 '
           '| tries (zone: clips torn) |', '|---|---|---|---|---|---|---|']
    for v in variants:
        f = os.path.join(tmp, v + '.glb')
        run(cli, 'synth', '--variant', v, '-o', f)
        rp = os.path.join(tmp, v + '.report.json')
        run(cli, 'fix', f, '-o', os.path.join(tmp, v + '.fixed.glb'), '--report', rp, '-q')
        rep = json.load(open(rp))
        if not rep.get('changed') or not rep.get('stretch'):
            continue  # no tail chain to bake (plain variants; scabbard: bound rigidly)
        w = rep['weights'][0] if rep.get('weights') else {}
        weights = (f"zone {w['blend_zone']:.2f}" if w.get('smooth') else 'one bone per piece')
        if rep.get('solver_fit', {}).get('kept'):
            weights += ', fit'
        stretch = {s['clip']: s for s in rep['stretch']}

        def cell(clip):
            s = stretch.get(clip)
            if not s:
                return '—'
            seam = f", seam {torn(s['seam']['torn'])}" if s.get('seam') else ''
            return f"{s['tail']['p99']:.2f} / {torn(s['tail']['torn'])}{seam} ({s['body']['p99']:.2f})"
        still, past = [], []
        for s in rep['stretch']:
            t = max(s['tail']['torn'], s['seam']['torn'] if s.get('seam') else 0)
            if t > 0:
                still.append(f"{s['clip']} {'seam ' if s.get('seam') and s['seam']['torn'] > s['tail']['torn'] else ''}"
                             f"{torn(t)}")
            if s['tail']['p99'] > 1.18 or s['tail']['max'] > 1.30:
                past.append(s['clip'])
        tries = ', '.join(f"{z['blend_zone']:.2f}" + (f" band {z['collar_band']:g}" if z.get('collar_band') not in (None, 0.5)
                                                       else '') + f": {z['torn_clips']}"
                          for z in rep.get('blend_zone_search', [])) or '—'
        out.append(f"| {v} | {weights} | {cell('Walk')} | {cell('Sprint')} | {', '.join(still) or 'none'} | "
                   f"{', '.join(past) or 'none'} | {tries} |")
    return '\n'.join(out)


def retarget_limbs(cli, tmp):
    """docs/retarget.md "Measured": the summary of tests/node/retarget.test.mjs
    (three.js plays source and result; limb angles and foot heights)."""
    corpus('clips/threejs_Soldier_rexport.glb')
    corpus('characters/banter_Wolf.glb')
    js = os.path.join(ROOT, 'tests', 'node', 'retarget.test.mjs')
    if not os.path.isdir(os.path.join(ROOT, 'node_modules', 'three')):
        raise NeedsCorpus(os.path.join(ROOT, 'node_modules', 'three') + ' (npm ci)')
    sj = os.path.join(tmp, 'retarget-summary.json')
    env = dict(os.environ, TB_CLI=os.path.abspath(cli), TB_TMP=tmp, TB_SUMMARY_JSON=sj)
    env.setdefault('TB_SHARED_DIR', os.path.join(ROOT, '..', 'shared'))
    p = subprocess.run(['node', js], capture_output=True, text=True, env=env)
    if p.returncode != 0 or not os.path.exists(sj):
        sys.exit(f'figures: {js} failed:\n{(p.stdout + p.stderr)[-2000:]}')
    rows = {}
    for r in json.load(open(sj)):
        clip = r['clip'].split('|')[-1]
        clip = clip[:-len('_Armature')] if clip.endswith('_Armature') else clip
        cells = (f"{r['limb_mean_deg']:.2f} / {r['limb_max_deg']:.2f}",
                 f"{r['foot_err_mean_cm']:.2f} / {r['foot_err_max_cm']:.2f}")
        rows.setdefault((clip, cells), []).append(r['character'])
    out = ['| clip | onto | limb angle vs source, mean / max (°) '
           '| lowest foot joint above bind vs source × leg ratio, mean / max (cm) |', '|---|---|---|---|']
    for (clip, cells), chars in rows.items():
        out.append(f"| {clip} | {', '.join(chars)} | {cells[0]} | {cells[1]} |")
    return '\n'.join(out)


def synth_variants(cli, tmp, old=''):
    """docs/synth.md: the variant list. The description columns (what the
    appendage is, how its weights are wrong) are prose, kept from the
    committed table; vertices, L, K and class come from each variant's truth
    file (`tailbone synth --variant V --truth T`)."""
    desc = {}
    for line in old.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) == 7 and cells[0].startswith('`'):
            note = cells[6].split(' ', 1)[1] if ' (' in cells[6] else ''
            desc[cells[0].strip('`')] = (cells[1], cells[2], note)
    variants = [l.split()[0] for l in run(cli, 'synth', '--list').splitlines() if l.strip()]
    out = ['| variant | appendage | weights (as riggers get them wrong) | vertices | L | K | class |',
           '|---|---|---|---|---|---|---|']
    for v in variants:
        tf = os.path.join(tmp, v + '.json')
        run(cli, 'synth', '--variant', v, '-o', os.path.join(tmp, v + '.glb'), '--truth', tf)
        t = json.load(open(tf))
        apps = t['appendages']
        what, weights, note = desc.get(v, (t.get('summary', ''), '', ''))
        lengths = sorted({f"{a['length_m']:.2f} m" for a in apps})
        length = (lengths[0] + (' each' if len(apps) > 1 else '')) if len(lengths) == 1 else ', '.join(lengths)
        ks = sorted({str(a['K']) for a in apps if 'K' in a})
        classes = sorted({a['class'] for a in apps})
        cls = ', '.join(classes) + (' ' + note if note and classes else '')
        out.append(f"| `{v}` | {what} | {weights} | {t['vertex_count']} | {length if apps else ''} | "
                   f"{', '.join(ks)} | {cls} |")
    return '\n'.join(out)

BLOCKS = {
    'readme-demo': ('README.md', readme_demo),
    'fix-tail-leg': ('docs/fix.md', fix_tail_leg),
    'synth-detection': ('docs/detection.md', synth_detection),
    'synth-variants': ('docs/synth.md', synth_variants),
    'measure-example': ('docs/measure.md', measure_example),
    'measure-compare-example': ('docs/measure.md', measure_compare_example),
    'detection-corpus': ('docs/detection.md', detection_corpus),
    'fixture-table': ('docs/detection.md', fixture_table),
    'retarget-limbs': ('docs/retarget.md', retarget_limbs),
    'retarget-foot-contact': ('docs/retarget.md', retarget_foot_contact),
    'fix-corpus-characters': ('docs/fix.md', fix_corpus_characters),
    'fix-bake-existing': ('docs/fix.md', fix_bake_existing),
    'fix-variants': ('docs/fix.md', fix_variants),
    'fix-bar': ('docs/fix.md', fix_bar_table),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--cli', default=os.path.join(ROOT, 'build', 'tailbone'))
    ap.add_argument('--check', action='store_true', help='fail when a committed block differs from a fresh run')
    ap.add_argument('--only', help='comma-separated block names')
    ap.add_argument('--tests-dir', help='where the test programs are (test_fixtures); default: CLI dir/tests')
    args = ap.parse_args()
    args.cli = os.path.abspath(args.cli)  # some generators run it from a scratch directory
    global TESTS_DIR
    TESTS_DIR = args.tests_dir or os.path.join(os.path.dirname(os.path.abspath(args.cli)), 'tests')
    required = os.environ.get('TB_REQUIRE_CORPUS') == '1'
    missing = []
    names = args.only.split(',') if args.only else list(BLOCKS)
    stale = []
    with tempfile.TemporaryDirectory(prefix='tb-figures-') as tmp:
        for name in names:
            doc, gen = BLOCKS[name]
            path = os.path.join(ROOT, doc)
            text = open(path, encoding='utf-8').read()
            begin, end = f'<!-- figures:{name} -->', f'<!-- /figures:{name} -->'
            if text.count(begin) != 1 or text.count(end) != 1:
                sys.exit(f'{doc}: needs exactly one {begin} ... {end} block')
            head, rest = text.split(begin, 1)
            old, tail = rest.split(end, 1)
            try:
                new = '\n' + (gen(args.cli, tmp, old) if gen is synth_variants else gen(args.cli, tmp)) + '\n'
            except NeedsCorpus as e:
                # honest skip (docs/testing.md): logged, and a failure in CI
                print(f'figures: {doc} [{name}] NOT CHECKED: {e} is missing'
                      + (' (TB_REQUIRE_CORPUS=1: fails)' if required else ''))
                missing.append(name)
                log = os.environ.get('TB_SKIP_LOG')
                if log:
                    with open(log, 'a') as f:
                        f.write(f'figures_current: missing {e} (block {name} not checked)\n')
                continue
            if old == new:
                print(f'figures: {doc} [{name}] is current')
                continue
            if args.check:
                stale.append(name)
                print(f'figures: {doc} [{name}] differs from a fresh run (run `make figures`):')
                sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                           'committed', 'fresh', n=0))
            else:
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(head + begin + new + end + tail)
                print(f'figures: {doc} [{name}] rewritten')
    return 1 if stale or (missing and required) else 0


if __name__ == '__main__':
    sys.exit(main())
