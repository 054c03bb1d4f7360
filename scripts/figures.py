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

  scripts/figures.py [--cli build/tailbone] [--check [--slow]] [--only NAME,NAME]

`--check` does not recompute the figures of the blocks that take minutes
(the Blender converter comparison) unless --slow or TB_FIGURES_SLOW=1, and
logs them as not checked; their shape (present, labelled as generated, a
row per file and converter) is checked always. `make figures` always
regenerates every block.
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
SLOW = False  # --slow: also the blocks that take minutes (Blender)
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


def bends(s):
    """A stretch row's largest bend per Tail_* joint from its bind pose, as
    the range over the joints (`max_bend_deg`)."""
    b = list((s.get('max_bend_deg') or {}).values())
    if not b:
        return '—'
    lo, hi = f'{min(b):.0f}', f'{max(b):.0f}'
    return f'{lo}°' if lo == hi else f'{lo}–{hi}°'


def fix_tail_leg(cli, tmp):
    """docs/fix.md: `tailbone fix --report` on synth tail_leg, every clip."""
    f = os.path.join(tmp, 'tail_leg.glb')
    run(cli, 'synth', '--variant', 'tail_leg', '-o', f)
    rp = os.path.join(tmp, 'tail_leg.report.json')
    run(cli, 'fix', f, '-o', os.path.join(tmp, 'tail_leg.fixed.glb'), '--report', rp, '-q')
    rep = json.load(open(rp))
    stretch = {s['clip']: s for s in rep['stretch']}
    search = ', '.join(f"{z['blend_zone']:.3g}: {z['torn_clips']}" for z in rep.get('blend_zone_search', []))
    chain = next((a for a in rep['appendages'] if a.get('decision') == 'chain'), {})
    w = rep['weights'][0] if rep.get('weights') else {}
    out = [f'Blend-zone search (zone: clips torn): {search or "not run"}. K = {chain.get("bones", "—")}, zone kept '
           f'{w.get("blend_zone", 0):.2f}, which carries {w.get("carried_bend_deg", 0):.0f}° per joint.', '',
           '| clip | keys | passes | closure | swing | tail p95 / p99 / max / torn | body p99 | tip travel '
           '| largest bend per joint |',
           '|---|---|---|---|---|---|---|---|---|']
    for c in rep['bake']['clips']:
        s = stretch.get(c['clip'])
        t = s['tail'] if s else None
        tail = f"{t['p95']:.2f} / {t['p99']:.2f} / {t['max']:.2f} / {torn(t['torn'])}" if t else '—'
        out.append(f"| {c['clip']} | {c['keys']} | {c['passes']} | {c['loop_closure_deg']:.2f}° | "
                   f"{c['swing_deg']:.1f}° | {tail} | {s['body']['p99']:.2f} | "
                   f"{100 * s['tip_travel_h']:.{0 if s['tip_travel_h'] >= 1 else 1}f}% H | {bends(s)} |"
                   if s else f"| {c['clip']} | {c['keys']} | {c['passes']} | | | — | | | |")
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


def detection_spine_rule(cli, tmp):
    """docs/detection.md, rules 6-9: `tailbone detect --json` on synth
    tail_back and scabbard, the values the spine-tail and carried rules
    read."""
    keys = ('elongation', 'slenderness', 'leave', 'taper', 'bend', 'reach', 'lateral')
    out = ['| variant | kind, decision | ' + ' | '.join(keys) + ' |', '|---|---|' + '---|' * len(keys)]
    for v in ('tail_back', 'scabbard'):
        f = os.path.join(tmp, v + '.glb')
        run(cli, 'synth', '--variant', v, '-o', f)
        det = json.loads(run(cli, 'detect', f, '--json'))
        for a in det.get('appendages', []):
            if a.get('decision') in ('chain', 'rigid'):
                out.append(f"| `{v}` | {a['kind']}, {a['decision']} | "
                           + ' | '.join(f"{a[k]:.2f}".replace('-0.00', '0.00') if k in a else '—' for k in keys) + ' |')
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
    corpus('clips/threejs_RobotExpressive.glb')
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



_FIX_BAR = {}


def fix_bar_rows(tmp):
    """test_fix_bar run fresh (once per figures.py run: two blocks read it):
    its table rows (cells) and its summary line."""
    if 'rows' in _FIX_BAR:
        return _FIX_BAR['rows'], _FIX_BAR['summary']
    corpus('clips/Xbot_agree_run_walk.glb')
    corpus('clips/threejs_Soldier_rexport.glb')
    corpus('clips/threejs_RobotExpressive.glb')
    exe = os.path.join(TESTS_DIR, 'test_fix_bar')
    if not os.path.exists(exe):
        sys.exit(f'figures: {exe} not built (make build)')
    env = dict(os.environ, TB_TMP=tmp)
    env.setdefault('TB_SHARED_DIR', os.path.join(ROOT, '..', 'shared'))
    p = subprocess.run([exe], capture_output=True, text=True, env=env, cwd=tmp)
    text = p.stdout + p.stderr
    rows = [line for line in text.splitlines() if line.startswith('| ') and not line.startswith('| body ')]
    summary = [line for line in text.splitlines() if ' found tails: ' in line]
    bends = [line for line in text.splitlines() if line.startswith('bends past what the weights carry: ')]
    if p.returncode != 0 or not rows or not summary:
        sys.exit(f'figures: test_fix_bar failed or printed no table:\n{text[-2000:]}')
    _FIX_BAR['rows'], _FIX_BAR['summary'] = rows, summary[0].strip() + ''.join('.\n' + b.strip() for b in bends)
    return rows, _FIX_BAR['summary']


def fix_bar_table(cli, tmp):
    """docs/fix.md "The bar, per fixture": the table that test_fix_bar prints
    (tb_fix_run with the defaults on every fixture tail found), run fresh."""
    rows, summary = fix_bar_rows(tmp)
    out = ['| body | fixture | tail p99 / max | torn (tail or seam) | swing | largest bend | fit | repaired vertices | '
           'repaired/body edges: torn / max (input torn) | repaired/repaired edges: torn / max (input torn) | '
           'torn samples, every repaired edge | body vs input | bar | largest bend per joint per clip (the weights carry) |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'] + rows + ['', summary + '.']
    return '\n'.join(out)


def fix_bar_short(cli, tmp, old=''):
    """docs/fix.md "Short of the bar": the rows of test_fix_bar's table
    marked listed, what each misses worked out from its figures against the
    bar (tail p99 <= 1.18, max <= 1.30, 0 torn, swing >= 10 deg); the "why"
    column is prose, kept from the committed block by body and fixture."""
    why = {}
    for line in old.splitlines():
        c = [x.strip() for x in line.strip().strip('|').split('|')]
        if len(c) == 4 and c[0] not in ('body', '---'):
            why[c[0], c[1].strip('`')] = c[3]
    rows, _ = fix_bar_rows(tmp)
    out = ['| body | fixture | what misses (from the table above) | why |', '|---|---|---|---|']
    for line in rows:
        c = [x.strip() for x in line.strip().strip('|').split('|')]
        if 'listed' not in c[12]:
            continue
        p99, mx = (float(x) for x in c[2].split(' / '))
        tornv, swing = float(c[3].rstrip('%')), float(c[4].rstrip('°'))
        honest, inner = c[8].split(' / ')[0], c[9].split(' / ')[0]
        miss = ([f'tail p99 {p99:.2f} > 1.18'] if p99 > 1.18 else []) + ([f'tail max {mx:.2f} > 1.30'] if mx > 1.30 else []) \
            + ([f'{c[3]} torn in tail or seam'] if tornv > 0 else []) + ([f'swing {c[4]} < 10°'] if swing < 10 else []) \
            + ([f'{honest} torn where the repaired skin meets the body'] if float(honest.rstrip('%')) > 0 else []) \
            + ([f'{inner} torn between two repaired vertices'] if float(inner.rstrip('%')) > 0 else []) \
            + (['the body differs from the input'] if c[11] != 'same' else [])
        out.append(f"| {c[0]} | `{c[1]}` | {', '.join(miss) or 'nothing the table shows at its rounding'} | "
                   f"{why.get((c[0], c[1]), 'not explained yet')} |")
    if len(out) == 2:
        return 'None: every row of the table above meets the bar.'
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


def synth_truth_example(cli, tmp):
    """docs/synth.md "Ground truth": `tailbone synth --variant tail_leg
    --truth T` as written, each key on its own line, long strings and lists
    shortened to their first item and "…"."""
    tf = os.path.join(tmp, 'truth.json')
    run(cli, 'synth', '--variant', 'tail_leg', '-o', os.path.join(tmp, 'truth.glb'), '--truth', tf)
    t = json.load(open(tf))

    def short(v):
        if isinstance(v, str) and len(v) > 40:
            return '"…"'
        if isinstance(v, list) and len(v) > 6:
            return '[' + json.dumps(v[0]) + ', …]'
        if isinstance(v, list) and v and isinstance(v[0], dict):
            return '[ ' + json.dumps(v[0]) + (', … ]' if len(v) > 1 else ' ]')
        return json.dumps(v)

    def obj(d, indent):
        pad = ' ' * indent
        return (',\n'.join(f'{pad}"{k}": ' + (('[ {\n' + obj(v[0], indent + 2) + '\n' + pad + '} ]'
                                                 + (' /* … */' if len(v) > 1 else ''))
                                                if k == 'appendages' else short(v)) for k, v in d.items()))
    return '```json\n{\n' + obj(t, 2) + '\n}\n```'


# ---- roles (docs/detection.md "Roles") --------------------------------------

def glb_read(path):
    import struct
    b = open(path, 'rb').read()
    n = struct.unpack_from('<I', b, 12)[0]
    return json.loads(b[20:20 + n]), b[20 + n:]


def glb_write(path, doc, rest):
    import struct
    j = json.dumps(doc, separators=(',', ':')).encode()
    j += b' ' * (-len(j) % 4)
    with open(path, 'wb') as f:
        f.write(struct.pack('<III', 0x46546C67, 2, 12 + 8 + len(j) + len(rest)))
        f.write(struct.pack('<II', len(j), 0x4E4F534A) + j + rest)


ROLE_SOURCES = ('name', 'fuzzy-name', 'vrm', 'shape', 'shape-over-name')
RIGIFY = {'Hips': 'spine', 'Spine': 'spine.001', 'Spine1': 'spine.002', 'Spine2': 'spine.003', 'Neck': 'spine.004',
          'Head': 'spine.006'}
RIGIFY_LIMBS = {'Shoulder': 'shoulder', 'Arm': 'upper_arm', 'ForeArm': 'forearm', 'Hand': 'hand', 'UpLeg': 'thigh',
                'Leg': 'shin', 'Foot': 'foot', 'ToeBase': 'toe'}


def axis_name(v):
    k = max(range(3), key=lambda i: abs(v[i]))
    return ('+' if v[k] > 0 else '−') + 'XYZ'[k]


def roles_row(cli, path, label):
    info = json.loads(run(cli, 'info', path, '--json'))
    sk = info['skins'][info.get('main_skin', 0) or 0]
    count = {s: [] for s in ROLE_SOURCES}
    other = []
    for j in sk['joints']:
        if 'role' in j:
            (count[j['role_source']] if j['role_source'] in count else other).append(j)
    cells = []
    for s in ROLE_SOURCES:
        js = count[s]
        if not js:
            cells.append('–')
        elif len(js) <= 3:
            cells.append(f"{len(js)} (" + ', '.join(f"`{j['name']}` {j['role']}" for j in js) + ')')
        else:
            cells.append(str(len(js)))
    b = sk['shape']
    if b.get('found'):
        hips = sk['roles'].get('Hips')
        body = (f"{'quadruped' if b['quadruped'] else 'biped'}, pelvis {b['pelvis']} "
                + ('(agrees)' if hips == b['pelvis'] else f'(Hips is {hips})' if hips else '(no Hips)')
                + f", up {axis_name(b['up'])}, facing {axis_name(b['forward'])}")
    else:
        body = 'none'
    if other:
        body += '; also ' + ', '.join(f"{j['role']} from {j['role_source']}" for j in other)
    return f"| {label} | " + ' | '.join(cells) + f" | {body} |"


def renamed(src, dst, how, named_roles):
    doc, rest = glb_read(src)
    nodes = doc['nodes']
    for i, n in enumerate(nodes):
        role = named_roles.get(i)
        if not role:
            continue
        name = n['name']
        if how == 'opaque':
            n['name'] = f'joint_{i}'
        elif how == 'blender':
            n['name'] = f'Bone.{i:03d}' if i else 'Bone'
        elif how == 'mirror':
            if name.startswith('Left'):
                n['name'] = 'Right' + name[4:]
            elif name.startswith('Right'):
                n['name'] = 'Left' + name[5:]
        elif how == 'jnt':
            n['name'] = ('RighUpLeg' if name == 'RightUpLeg' else name) + '_jnt'
        elif how == 'rigify':
            if role in RIGIFY:
                n['name'] = RIGIFY[role]
            else:
                side = '.L' if role.startswith('Left') else '.R'
                n['name'] = RIGIFY_LIMBS[role[4:] if role.startswith('Left') else role[5:]] + side
        elif how == 'vrm':
            n['name'] = f'joint_{i}'
    if how == 'vrm':
        inv = {r: i for i, r in named_roles.items()}
        doc.setdefault('extensions', {})['VRM'] = {'humanoid': {'humanBones': [
            {'bone': 'hips', 'node': inv['Hips']}, {'bone': 'leftUpperLeg', 'node': inv['LeftUpLeg']}]}}
        used = doc.setdefault('extensionsUsed', [])
        if 'VRM' not in used:
            used.append('VRM')
    glb_write(dst, doc, rest)


def roles_table(cli, tmp):
    """docs/detection.md "Roles": where each joint's role came from
    (`tailbone info --json`: role_source per joint, the shape's body) on the
    corpus characters and on synth characters renamed as riggers name them."""
    out = ['| file | name | fuzzy-name | vrm | shape | shape-over-name | shape\'s body |', '|---|---|---|---|---|---|---|']
    rows = []
    for label, rel in [('corpus Xbot (`mixamorig:`)', 'clips/Xbot_agree_run_walk.glb'),
                       ('corpus Soldier', 'clips/threejs_Soldier_rexport.glb'),
                       ('corpus RobotExpressive', 'clips/threejs_RobotExpressive.glb'),
                       ('corpus Wolf', 'characters/banter_Wolf.glb'),
                       ('corpus Bone Demon', 'characters/banter_Bone_Demon.glb'),
                       ('corpus khronos Fox (`b_Hip_01`…)', 'reference/khronos_Fox.glb'),
                       ('corpus quaternius Fox', 'reference/quaternius_Fox.glb')]:
        rows.append(roles_row(cli, corpus(rel), label))
    cases = [('tail_leg', 'opaque', 'synth `tail_leg`, names `joint_N`'),
             ('tail_leg', 'blender', "synth `tail_leg`, Blender's `Bone.NNN`"),
             ('tail_leg', 'mirror', 'synth `tail_leg`, Left/Right swapped'),
             ('tail_leg', 'jnt', 'synth `tail_leg`, `X_jnt` with `RighUpLeg_jnt`'),
             ('tail_hips', 'rigify', 'synth `tail_hips`, Rigify metarig names'),
             ('plain', 'vrm', 'synth `plain`, names `joint_N` + VRM map (hips, left thigh)')]
    for variant, how, label in cases:
        src, dst = os.path.join(tmp, variant + '.bare.glb'), os.path.join(tmp, f'{variant}.{how}.glb')
        run(cli, 'synth', '--variant', variant, '--names', 'bare', '-o', src)
        info = json.loads(run(cli, 'info', src, '--json'))
        sk = info['skins'][info.get('main_skin', 0) or 0]
        named = {j['node']: j['role'] for j in sk['joints'] if j.get('role_source') == 'name'}
        renamed(src, dst, how, named)
        rows.append(roles_row(cli, dst, label))
    return '\n'.join(out + rows)


# ---- docs/fix.md experiments: non-default options, run fresh ----------------

def fix_report(cli, tmp, glb, *opts):
    rp = os.path.join(tmp, 'exp.report.json')
    run(cli, 'fix', glb, '-o', os.path.join(tmp, 'exp.glb'), '--report', rp, '-q', *opts)
    return json.load(open(rp))


def fixture_glb(cli, tmp, fixture, body='synth:plain'):
    f = os.path.join(tmp, fixture + '.glb')
    run(cli, 'synth', '--onto', body, '--fixture', fixture, '-o', f)
    return f


def fix_solver_experiment(cli, tmp):
    """docs/fix.md: the solver settings on curl_shell_nearest (synth:plain),
    `fix --only Walk,Sprint,Crouch [--no-solver-fit --no-weight-fit
    --rest-curve R --bend-limit L]`; tail p99 / max / torn per clip."""
    f = fixture_glb(cli, tmp, 'curl_shell_nearest')
    clips = ('Walk', 'Sprint', 'Crouch')
    nofit = ['--no-solver-fit', '--no-weight-fit']  # the solver's settings alone
    rows = [('SPEC (restCurve 0, limit 30°)', [*nofit, '--rest-curve', '0', '--bend-limit', '30']),
            ('restCurve 0.5, limit 15°', [*nofit, '--rest-curve', '0.5', '--bend-limit', '15']),
            ('restCurve 1, limit 30°', [*nofit, '--rest-curve', '1', '--bend-limit', '30']),
            ('restCurve 1, limit 22°', [*nofit, '--rest-curve', '1', '--bend-limit', '22']),
            (None, [])]
    out = ['| solver | ' + ' | '.join(clips) + ' |', '|---|---|---|---|']
    for label, opts in rows:
        rep = fix_report(cli, tmp, f, '--only', ','.join(clips), *opts)
        st = {x['clip']: x for x in rep['stretch']}
        cells = [f"{st[c]['tail']['p99']:.2f} / {st[c]['tail']['max']:.2f} / {torn(st[c]['tail']['torn'])}"
                 if c in st else '—' for c in clips]
        if label is None:
            sf = rep.get('solver_fit') or {}
            label = (f"fitted (default): restCurve {sf.get('rest_curve', 0):g}, limit {sf.get('bend_limit_deg', 0):.0f}°, "
                     f"carry {sf.get('carry_deg', 0):.0f}°" + ('' if sf.get('kept') else ', not kept'))
            label, cells = f'**{label}**', [f'**{c}**' for c in cells]
        out.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    return '\n'.join(out)


def fix_bind_limit_experiment(cli, tmp):
    """docs/fix.md, the bind limit: fixture hang_shell_leg on synth:plain,
    `fix --only Walk,Sprint,Crouch [--bind-limit D]`; tail p99 / max / torn
    and the largest bend per joint from the bind pose, per clip."""
    f = fixture_glb(cli, tmp, 'hang_shell_leg')
    clips = ('Walk', 'Sprint', 'Crouch')
    out = ['| solver | ' + ' | '.join(clips) + ' |', '|---|' + '---|' * len(clips)]
    carried = None
    for opts in (['--bind-limit', '180'], ['--bind-limit', '31'], ['--bind-limit', '24'], []):
        rep = fix_report(cli, tmp, f, '--only', ','.join(clips), *opts)
        st = {x['clip']: x for x in rep['stretch']}
        cells = [f"{st[c]['tail']['p99']:.2f} / {st[c]['tail']['max']:.2f} / {torn(st[c]['tail']['torn'])}; {bends(st[c])}"
                 if c in st else '—' for c in clips]
        if opts:
            label = f'`--bind-limit {opts[1]}`' + (' (none in effect: the fit\'s bend limit alone)' if opts[1] == '180' else '')
        else:
            sf = rep.get('solver_fit') or {}
            w = rep['weights'][0] if rep.get('weights') else {}
            carried = w.get('carried_bend_deg')
            label = (f"fitted (default): bend limit {sf.get('bend_limit_deg', 0):.0f}°, bind limit "
                     f"{sf.get('bind_limit_deg', 0):.0f}°" + ('' if sf.get('kept') else ', not kept'))
            label, cells = f'**{label}**', [f'**{c}**' for c in cells]
        out.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    if carried is not None:
        out += ['', f'The weights kept carry {carried:.0f}° per joint (`weights[].carried_bend_deg`).']
    return '\n'.join(out)


def fix_ramp_zone(cli, tmp):
    """docs/fix.md, "The ramp the weights really have": `tailbone fix --only
    CLIPS --report` with the defaults on fixtures whose kept weights are a
    plain SPEC A9 ramp (hang_shell_leg) or steepened by a welded tail's
    collar band (hang_welded_nearest, and on the Xbot and the Soldier the two
    tails the ramp reading was written for): the zone kept, the ramp read
    back (`weights[].ramp_zone`), the solver fit's bind limit, and per clip
    tail max, torn (tail, seam) and swing."""
    cases = (('synth:plain', None, 'hang_shell_leg', ('Walk', 'Sprint', 'Crouch')),
             ('synth:plain', None, 'hang_welded_nearest', ('Walk', 'Sprint', 'Crouch')),
             ('Xbot', 'clips/Xbot_agree_run_walk.glb', 'up_welded_hips+vest', ('walk', 'run')),
             ('Soldier', 'clips/threejs_Soldier_rexport.glb', 'hang_welded_nearest', ('Walk', 'Run')))
    out = ['| body | fixture | zone kept | ramp read back | bind limit (fit) | per clip: tail max, torn tail / seam, swing |',
           '|---|---|---|---|---|---|']
    for label, rel, fixture, clips in cases:
        f = fixture_glb(cli, tmp, fixture, corpus(rel) if rel else 'synth:plain')
        rep = fix_report(cli, tmp, f, '--only', ','.join(clips))
        w = next((x for x in rep.get('weights', []) if x.get('smooth')), {})
        sf = rep.get('solver_fit') or {}
        def short(n):  # 'Armature|Armature|walk_Armature' -> 'walk'
            n = n.split('|')[-1]
            return n[:-len('_Armature')] if n.endswith('_Armature') else n
        st = {short(x['clip']): x for x in rep.get('stretch', [])}
        sw = {short(c['clip']): c for c in rep['bake']['clips']}
        fit = (f"{sf['bind_limit_deg']:.0f}°" if sf.get('bind_limit_deg') else '—') + ('' if sf.get('kept') else ' (not kept)')
        per = []
        for c in clips:
            x = st[c]
            seam = torn(x['seam']['torn']) if x.get('seam') else '—'
            per.append(f"{c} {x['tail']['max']:.2f}, {torn(x['tail']['torn'])} / {seam}, {sw[c]['swing_deg']:.0f}°")
        out.append(f"| {label} | {fixture} | {w.get('blend_zone', 0):.3f} | {w.get('ramp_zone', 0):.3f} | {fit} | "
                   + '; '.join(per) + ' |')
    return '\n'.join(out)


def fix_collar_band_experiment(cli, tmp):
    """docs/fix.md: the collar band on synth tail_welded, `fix --only
    Walk,Sprint,Crouch --blend-zone 0.25 --collar-band S`; seam torn, tail
    p99 / max."""
    f = os.path.join(tmp, 'tail_welded.glb')
    run(cli, 'synth', '--variant', 'tail_welded', '-o', f)
    out = ['| collar band | Walk seam | Sprint seam | Crouch seam | Walk tail p99 / max | Sprint tail p99 / max |',
           '|---|---|---|---|---|---|']
    for band, label in (('0', 'none (SPEC A9 as written)'), ('0.5', '**0.5 segment (default)**'),
                        ('1', '1 segment'), ('2', '2 segments')):
        rep = fix_report(cli, tmp, f, '--only', 'Walk,Sprint,Crouch', '--blend-zone', '0.25', '--collar-band', band)
        st = {x['clip']: x for x in rep['stretch']}
        seam = [torn(st[c]['seam']['torn']) if c in st and st[c].get('seam') else '—' for c in ('Walk', 'Sprint', 'Crouch')]
        tail = [f"{st[c]['tail']['p99']:.2f} / {st[c]['tail']['max']:.2f}" if c in st else '—' for c in ('Walk', 'Sprint')]
        out.append(f'| {label} | ' + ' | '.join(seam + tail) + ' |')
    return '\n'.join(out)


def welded_fox_glb(tmp):
    """The Quaternius fox with its artist's Tail1..Tail8 weights moved onto
    its Back bone (as test_detect's strip_tail_weights does), written beside
    the other scratch files: one welded surface whose tail has no bone."""
    import struct
    b = bytearray(open(corpus('reference/quaternius_Fox.glb'), 'rb').read())
    n = struct.unpack_from('<I', b, 12)[0]
    doc = json.loads(b[20:20 + n])
    bin0 = 20 + n + 8
    names = [doc['nodes'][j].get('name') or '' for j in doc['skins'][0]['joints']]
    target = names.index('Back')
    tail = {k for k, nm in enumerate(names) if nm.startswith('Tail') and nm[4:5] in tuple('123456789')}
    f32 = lambda x: struct.unpack('<f', struct.pack('<f', x))[0]  # sums in float, as the C test does
    for mesh in doc['meshes']:
        for prim in mesh['primitives']:
            ja, wa = (doc['accessors'][prim['attributes'][k]] for k in ('JOINTS_0', 'WEIGHTS_0'))
            if ja['componentType'] != 5123 or wa['componentType'] != 5126 or 'sparse' in ja or 'sparse' in wa:
                sys.exit('figures: quaternius_Fox.glb: JOINTS_0/WEIGHTS_0 are not the packed ushort/float this expects')
            jo, wo = (bin0 + doc['bufferViews'][a['bufferView']].get('byteOffset', 0) + a.get('byteOffset', 0)
                      for a in (ja, wa))
            for v in range(ja['count']):
                j = list(struct.unpack_from('<4H', b, jo + 8 * v))
                w = list(struct.unpack_from('<4f', b, wo + 16 * v))
                moved, slot = 0.0, -1
                for q in range(4):
                    if w[q] > 0 and j[q] in tail:
                        moved, w[q], j[q] = f32(moved + w[q]), 0.0, 0
                    if w[q] > 0 and j[q] == target:
                        slot = q
                if moved > 0:
                    slot = slot if slot >= 0 else w.index(0.0)
                    j[slot], w[slot] = target, f32(w[slot] + moved)
                    struct.pack_into('<4H', b, jo + 8 * v, *j)
                    struct.pack_into('<4f', b, wo + 16 * v, *w)
    f = os.path.join(tmp, 'fox_welded.glb')
    open(f, 'wb').write(b)
    return f


def fix_welded_fox(cli, tmp):
    """docs/fix.md "Welded tails": the Quaternius fox, its tail weights on
    its Back bone, `fix --pelvis Back --only Walk,Gallop,Idle
    [--collar-band S]`: seam torn per clip, the tail's worst p99 / max."""
    f = welded_fox_glb(tmp)
    clips = ('Walk', 'Gallop', 'Idle')
    out = ['| collar band | ' + ' | '.join(f'{c} seam torn' for c in clips) + ' | tail p99 / max (largest over the clips) '
           '| blend zone kept (tries) |', '|---|' + '---|' * (len(clips) + 2)]
    for band in ('0', '0.5', '1', '2', None):
        rep = fix_report(cli, tmp, f, '--pelvis', 'Back', '--only', ','.join(clips),
                         *(['--collar-band', band] if band is not None else []))
        st = {x['clip'].split('|')[-1]: x for x in rep['stretch']}
        a = next(a for a in rep['appendages'] if a.get('decision') == 'chain')
        label = ({'0': 'none (SPEC A9 as written)'}.get(band, f'{band} segment' + ('s' if band == '2' else ''))
                 if band is not None else
                 f"**default: {a['collar_band']:.2f} segment** ({a['welded_collar']} collar vertices)")
        seam = [torn(st[c]['seam']['torn']) if c in st and st[c].get('seam') else '—' for c in clips]
        p99 = max(x['tail']['p99'] for x in rep['stretch'])
        mx = max(x['tail']['max'] for x in rep['stretch'])
        tries = rep.get('blend_zone_search') or []
        zone = f"{rep['weights'][0]['blend_zone']:.2f}" + (f' ({len(tries)})' if tries else '')
        out.append(f'| {label} | ' + ' | '.join(seam) + f' | {p99:.2f} / {mx:.2f} | {zone} |')
    return '\n'.join(out)


def fix_collar_ring(cli, tmp):
    """docs/fix.md "The collar ring halfway": the weight search on the two
    welded fixtures on synth:plain, `fix --only Walk,Sprint,Crouch` with the
    defaults: every try (`blend_zone_search`; the last, where one tears still,
    the band's weights fitted to the poses), then the kept result per clip."""
    tries = ['| fixture | try | blend zone | collar band | collar ring (or the fit) | clips torn | worst torn share '
             '| worst tail p99 / max |', '|---|---|---|---|---|---|---|---|']
    kept = ['| fixture | clip | kept: tail p99 / max | seam torn | body torn |', '|---|---|---|---|---|']
    for fx in ('hang_welded_nearest', 'beside_welded_leg'):
        rep = fix_report(cli, tmp, fixture_glb(cli, tmp, fx), '--only', 'Walk,Sprint,Crouch')
        for i, z in enumerate(rep.get('blend_zone_search', []), 1):
            tries.append(f"| {fx if i == 1 else ''} | {i} | {z['blend_zone']:.2f} | {z['collar_band']:g} | "
                         f"{'halfway' if z.get('collar_ring') else 'fitted to the poses' if z.get('fitted') else '—'} | "
                         f"{z['torn_clips']} | {torn(z['worst_torn'])} | "
                         f"{z['worst_tail_p99']:.2f} / {z['worst_tail_max']:.2f} |")
        for i, x in enumerate(rep['stretch']):
            seam = torn(x['seam']['torn']) if x.get('seam') else '—'
            kept.append(f"| {fx if i == 0 else ''} | {x['clip']} | {x['tail']['p99']:.2f} / {x['tail']['max']:.2f} | "
                        f"{seam} | {100 * x['body']['torn']:.3f}% |")
    return '\n'.join(tries + [''] + kept)


def vrm_measured(cli, tmp):
    """docs/vrm.md "Measured": the summary of tests/node/vrm.test.mjs run
    fresh (three.js + @pixiv/three-vrm play the baked and the springs file;
    the fit's own figures, `fix --vrm-springs --json` vrm_springs.fit)."""
    for mod in ('three', os.path.join('@pixiv', 'three-vrm')):
        if not os.path.isdir(os.path.join(ROOT, 'node_modules', mod)):
            raise NeedsCorpus(os.path.join(ROOT, 'node_modules', mod) + ' (npm ci)')
    js = os.path.join(ROOT, 'tests', 'node', 'vrm.test.mjs')
    sj = os.path.join(tmp, 'vrm-summary.json')
    env = dict(os.environ, TB_CLI=os.path.abspath(cli), TB_TMP=tmp, TB_SUMMARY_JSON=sj)
    p = subprocess.run(['node', js], capture_output=True, text=True, env=env)
    if p.returncode != 0 or not os.path.exists(sj):
        sys.exit(f'figures: {js} failed:\n{(p.stdout + p.stderr)[-2000:]}')
    r = json.load(open(sj))
    f, js_ = r['fit'], r['joints']
    h = lambda x, d=2: f'{100 * x:.{d}f}% H'
    out = [f"Walk, sixth loop, {r['walk_frames']} frames at 60 Hz, `Tail_End` world position, three-vrm against "
           f"the baked file: mean {h(r['tip_mean_h'])}, max {h(r['tip_max_h'])}; tip travel in the loop: baked "
           f"{h(r['travel_baked_h'], 1)}, runtime {h(r['travel_runtime_h'], 1)} "
           f"({100 * r['travel_runtime_h'] / r['travel_baked_h']:.0f}% of it). The fitted model's swing is "
           f"{100 * f['swing_after_m'] / f['swing_baked_m']:.0f}% of ours.", '',
           f"| the fit's model, {f['clips']} clips' mean (`vrm_springs.fit`) | analytic start | fitted |", '|---|---|---|',
           f"| distance from our motion, last tip | {f['tip_before_m']:.3f} m | {f['tip_after_m']:.3f} m |",
           f"| distance from our motion, all {len(js_)} tips | {f['tips_before_m']:.3f} m | {f['tips_after_m']:.3f} m |",
           f"| last tip's swing (ours {f['swing_baked_m']:.3f} m) | {f['swing_before_m']:.3f} m | {f['swing_after_m']:.3f} m |",
           '', f"Written joints (Tail_1 … Tail_{len(js_)}): stiffness "
           + ', '.join(f"{j['stiffness']:.3g}" for j in js_) + '; dragForce '
           + ', '.join(f"{j['dragForce']:.3f}" for j in js_) + '; gravityPower '
           + ', '.join(f"{j['gravityPower']:.3f}" for j in js_) + f"; {f['evaluations']} model runs."]
    return '\n'.join(out)


def fix_zone_experiment(cli, tmp):
    """docs/fix.md: tail torn share by pinned blend zone with smooth weights,
    `fix [--clips Xbot --only walk,run] --smooth-pieces --blend-zone Z`
    (synthetic: --only Walk,Sprint); "torn a / b (max a / b)" per clip."""
    zones = ('0.25', '0.4', '0.5')
    cases = []
    for name, rel in (('banter_Wolf', 'characters/banter_Wolf.glb'), ('banter_Bone_Demon', 'characters/banter_Bone_Demon.glb')):
        cases.append((f'{name}, Xbot walk / run', corpus(rel),
                      ['--clips', corpus('clips/Xbot_agree_run_walk.glb'), '--only', 'walk,run'], ('walk', 'run')))
    for v in ('tail_curled', 'tail_fur', 'tail_leg'):
        f = os.path.join(tmp, v + '.glb')
        run(cli, 'synth', '--variant', v, '-o', f)
        cases.append((f'{v} Walk / Sprint', f, ['--only', 'Walk,Sprint'], ('Walk', 'Sprint')))
    out = ['| tail torn (tail max) | ' + ' | '.join(('SPEC zone ' if z == '0.25' else 'zone ') + z for z in zones) + ' |',
           '|---|' + '---|' * len(zones)]
    for label, f, opts, clips in cases:
        cells = []
        for z in zones:
            rep = fix_report(cli, tmp, f, *opts, '--smooth-pieces', '--blend-zone', z)
            st = [next(x for x in rep['stretch'] if x['clip'].split('|')[-1].lower().startswith(c.lower())) for c in clips]
            cells.append(' / '.join(torn(x['tail']['torn']) for x in st)
                         + ' (max ' + ' / '.join(f"{x['tail']['max']:.2f}" for x in st) + ')')
        out.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    return '\n'.join(out)


class Slow(Exception):
    pass


class NotBuilt(Exception):
    """The block needs a part this tailbone was built without (the preview
    page in the sanitizer build): not checked, logged as a skip."""


def blender_converters(cli, tmp):
    """docs/blender.md "Blender or assimp": scripts/fbx_converters.sh run
    fresh (GLB -> FBX -> GLB through Blender and through assimp, compared in
    three.js by scripts/compare_skinned.mjs). Needs Blender, assimp, node
    and ../shared; minutes of Blender, so `figures.py --check` runs it only
    with --slow (TB_FIGURES_SLOW=1) and logs it as not checked otherwise."""
    import shutil
    for rel in ('reference/khronos_Fox.glb', 'reference/quaternius_Fox.glb', 'clips/Xbot_agree_run_walk.glb',
                'characters/banter_Wolf.glb'):
        corpus(rel)
    for tool in ('blender', 'assimp', 'node'):
        if not shutil.which(tool):
            raise NeedsCorpus(f'{tool} (on PATH)')
    if not os.path.isdir(os.path.join(ROOT, 'node_modules', 'three')):
        raise NeedsCorpus(os.path.join(ROOT, 'node_modules', 'three') + ' (npm ci)')
    if not SLOW:
        raise Slow('Blender converts four files both ways (minutes)')
    out = os.path.join(tmp, 'fbx')
    # the script starts Blender in the environment the CLI gives it
    # (scripts/blender_env.sh: no PYTHON*, the system's folders first on PATH)
    p = subprocess.run([os.path.join(ROOT, 'scripts', 'fbx_converters.sh'), out, cli], capture_output=True, text=True)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{')]
    names = {'khronos_Fox': 'khronos_Fox', 'quaternius_Fox': 'quaternius_Fox',
             'Xbot_agree_run_walk': 'Xbot_agree_run_walk', 'wolf_xbot': 'Wolf + Xbot clips, repaired (`fix --clips`)'}
    rows = ['| file (vertices, joints, clips) | converter | vertices, joints, clips back | clip durations '
            '| p99 / max distance, worst clip |', '|---|---|---|---|---|']
    cur, first = None, {}
    for i, r in enumerate(lines):
        if 'converter' not in r:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) and 'per_clip' in lines[i + 1] else None
        f, conv = r['file'], r['converter']
        label = ''
        if f != cur:
            cur = f
            a = nxt or {}
            label = names.get(f, f) + (f" ({a['vertices'][0]:,}, {a['joints'][0]}, {a['clips'][0]})" if a else '')
        if nxt is None and conv == 'blender':
            # Blender is what `fix` uses: a failed conversion is a failure here, not a figure
            log = os.path.join(out, f + '.log')
            tail = open(log, errors='replace').read()[-1500:] if os.path.exists(log) else '(no log)'
            sys.exit(f'figures: Blender did not convert {f} (scripts/fbx_converters.sh); its log ends:\n{tail}')
        if nxt is None:
            rows.append(f"| {label} | {conv} | failed reading its own FBX back (exit {r.get('rc', '?')}), no GLB | | |")
            continue
        pc = {k: v for k, v in nxt['per_clip'].items() if isinstance(v, dict)}
        back = f"{nxt['vertices'][1]:,}, {nxt['joints'][1]}, {nxt['clips'][1]}"
        if len(pc) != nxt['clips'][0]:
            back += f' ({len(pc)} matched by name)'
        if conv == 'assimp' and r.get('rc'):
            back = f"exit {r['rc']} reading its own FBX, leaving a GLB of " + back
        durs = [v['duration'] for v in pc.values()]
        if all(abs(a - b) < 1e-3 for a, b in durs):
            dur = 'all equal'
        else:
            dur = ', '.join(f'{b:.3g} s' for _, b in durs) + ' (were ' + ', '.join(f'{a:.3g}' for a, _ in durs) + ')'
        worst = max(pc.items(), key=lambda kv: (kv[1]['p99'], kv[1]['max'])) if pc else None
        if worst is None:
            dist = 'no clip matched'
        elif worst[1]['max'] == 0:
            dist = '0 / 0 H (every clip)'
        else:
            short = worst[0].split('|')[-1]
            dist = f"{worst[1]['p99']:.4g} / {worst[1]['max']:.4g} H ({short[:-9] if short.endswith('_Armature') else short})"
        if nxt['bind']['max'] > 0.01:
            dist += f", rest {nxt['bind']['p99']:.4g} / {nxt['bind']['max']:.4g} H"
        rows.append(f'| {label} | {conv} | {back} | {dur} | {dist} |')
    leg = next((l['repair_leg'] for l in lines if 'repair_leg' in l), None)
    if p.returncode != 0 or len(rows) < 6:
        sys.exit(f'figures: fbx_converters.sh failed:\n{(p.stdout + p.stderr)[-2000:]}')
    if leg:
        rows += ['', 'The repair leg (the Wolf as FBX, `fix --clips` Xbot, read back): tail p99 / torn, body torn per '
                 'clip: ' + '; '.join(f"{c.split('|')[-1].replace('_Armature', '')} {p99:.2f} / {torn(tt)}, {torn(bt)}" for c, p99, tt, bt in leg) + '.']
    return '\n'.join(rows)


def blender_block_shape(old, doc_text):
    """What `--check` without --slow still verifies of the blender-converters
    block (its figures are not recomputed): the label before it that says
    where it comes from, the table's header, a Blender and an assimp row for
    each of the four files, a figure in every Blender row, the repair leg's
    line. A list of what is wrong, empty when the block has that shape."""
    bad = []
    label = '(block `blender-converters`'
    head = doc_text.split('<!-- figures:blender-converters -->', 1)[0]
    if label not in head[-1500:]:
        bad.append(f'the text before the block does not say it is generated ({label}… within 1,500 characters)')
    lines = [l for l in old.splitlines() if l.startswith('|')]
    if not lines or not lines[0].startswith('| file (vertices, joints, clips) | converter |'):
        bad.append('the table header is missing')
    files = ('khronos_Fox', 'quaternius_Fox', 'Xbot_agree_run_walk', 'Wolf + Xbot clips')
    rows, cur = {}, None
    for l in lines[2:]:
        c = [x.strip() for x in l.strip().strip('|').split('|')]
        if c[0]:
            cur = next((f for f in files if c[0].startswith(f)), c[0])
        rows.setdefault(cur, {})[c[1] if len(c) > 1 else ''] = c
    for f in files:
        for conv in ('blender', 'assimp'):
            if conv not in rows.get(f, {}):
                bad.append(f'no {conv} row for {f}')
        b = rows.get(f, {}).get('blender')
        if b and not re.search(r'\d', b[-1]):
            bad.append(f'the blender row of {f} has no distance figure')
    if 'The repair leg (the Wolf as FBX' not in old:
        bad.append("the repair leg's line is missing")
    return bad


def readme_baked(cli, tmp):
    """README, after "Before and after": the baked demo file per clip,
    `tailbone fix --report` on synth tail_leg (Walk, Sprint), and the
    blend-zone search that chose its weights."""
    f = os.path.join(tmp, 'fox_broken.glb')
    run(cli, 'synth', '--variant', 'tail_leg', '-o', f)
    rep = fix_report(cli, tmp, f)
    st = {x['clip']: x for x in rep['stretch']}
    bk = {c['clip']: c for c in rep['bake']['clips']}
    tries = rep.get('blend_zone_search', [])
    kept = rep['weights'][0]['blend_zone'] if rep.get('weights') else None
    if tries:
        t0 = tries[0]
        torn_end = sum(1 for x in rep['stretch'] if x['tail']['torn'] > 0)
        how = (f"the blend sized from the tail's geometry, zone {t0['blend_zone']:.2f}, tore {t0['torn_clips']} "
               f"clips, worst {torn(t0['worst_torn'])}, so `fix` re-weighted the same baked file with other blends "
               f"and kept {kept:.2g}, which tears " + ('nowhere' if not torn_end else f'{torn_end} clips'))
    else:
        how = f"the blend sized from the tail's geometry, zone {kept:.2f}, tore nothing"
    parts = []
    for clip in ('Walk', 'Sprint'):
        x, c = st[clip], bk[clip]
        parts.append(f"{clip} tail p99 {x['tail']['p99']:.2f} vs body {x['body']['p99']:.2f}, max {x['tail']['max']:.2f}, "
                     f"{torn(x['tail']['torn'])} torn, loop closure {c['loop_closure_deg']:.2f}°, tail swing "
                     f"{c['swing_deg']:.0f}°")
    return f"The baked file (what a viewer plays) reads, per clip, from `tailbone fix` ({how}): " + '; '.join(parts) + '.'


def readme_corpus(cli, tmp):
    """README: the corpus characters repaired with transferred clips, as
    ranges over every clip (`fix CHAR --clips LIB --only walk,run --report`,
    as in docs/fix.md's fix-corpus-characters)."""
    chars = ['characters/banter_Wolf.glb', 'characters/banter_Bone_Demon.glb']
    tail, body, tornv, seams, swing, travel = [], [], [], [], [], []
    for crel in chars:
        for _, lrel, _ in LIBS:
            rep = fix_report(cli, tmp, corpus(crel), '--clips', corpus(lrel), '--only', 'walk,run')
            for x in rep['stretch']:
                tail.append(x['tail']['p99']); body.append(x['body']['p99']); tornv.append(x['tail']['torn'])
                travel.append(x['tip_travel_h'])
            for c in rep['bake']['clips']:
                seams.append(c['loop_closure_deg']); swing.append(c['swing_deg'])
    rng = lambda v, fmt: (fmt(min(v)) if fmt(min(v)) == fmt(max(v)) else f'{fmt(min(v))}–{fmt(max(v))}')
    return ("On the real characters in `../shared/corpus` (bodies and tails built from rigid pieces; Xbot and Soldier "
            "walk/run transferred with `--clips`), `fix` binds each tail piece to one bone like the body: tail p99 "
            f"{rng(tail, lambda x: f'{x:.2f}')}, body p99 {rng(body, lambda x: f'{x:.2f}')}, "
            f"{rng(tornv, torn)} torn, loop seams {rng(seams, lambda x: f'{x:.2f}')}°, tail swing "
            f"{rng(swing, lambda x: f'{x:.0f}')}°, tip travel {rng(travel, lambda x: f'{100 * x:.0f}')}% of H "
            "(`docs/fix.md` has every row and what smooth weights give instead).")

# ---- figures that tests print or that detect reports per object ------------

def test_prints(prog, case, tmp):
    """Runs one cmocka case of a test program (TBT_FILTER) and returns what
    it printed; a failing case stops the figures run."""
    exe = os.path.join(TESTS_DIR, prog)
    if not os.path.exists(exe):
        sys.exit(f'figures: {exe} not built (make build)')
    env = dict(os.environ, TBT_FILTER=case, TB_TMP=tmp)
    env.setdefault('TB_SHARED_DIR', os.path.join(ROOT, '..', 'shared'))
    p = subprocess.run([exe], capture_output=True, text=True, env=env, cwd=tmp)
    text = p.stdout + p.stderr
    if p.returncode != 0 or re.search(r'\[==========\] 0 test', text):
        sys.exit(f'figures: {prog} {case} failed or did not run:\n{text[-2000:]}')
    return text


def spring_limit_tests(cli, tmp):
    """docs/fix.md, the bind limit and contact-keeps-limit options: what
    test_rt_spring's two cases print (largest bends, tip travel, clearance),
    each without and with the option."""
    bind = test_prints('test_rt_spring', 'spring_bind_limit_bounds_the_bend_from_the_bind_pose', tmp)
    m = re.search(r'SPEC B ([\d.]+) deg, bind limit 15 deg: ([\d.]+) deg; tip travel ([\d.]+) / ([\d.]+) m', bind)
    contact = test_prints('test_rt_spring', 'spring_contact_keeps_the_bend_limit_when_asked', tmp)
    c = re.search(r'contact beats the limit ([\d.]+) deg, keeps it ([\d.]+) deg; min clearance (-?[\d.]+) / (-?[\d.]+) m',
                  contact)
    if not m or not c:
        sys.exit('figures: test_rt_spring printed no figures for the bind limit / contact cases')
    out = ['| test_rt_spring case | what is measured | option off (SPEC B) | option on |', '|---|---|---|---|',
           f'| `spring_bind_limit_bounds_the_bend_from_the_bind_pose`: straight 4-link chain, sideways and vertical '
           f'hip sweeps, the SPEC\'s carry; option: a 15° bind limit | largest bend from the bind pose; tip travel '
           f'| {m.group(1)}°; {m.group(3)} m | {m.group(2)}°; {m.group(4)} m |',
           f'| `spring_contact_keeps_the_bend_limit_when_asked`: ground raised to 0.5 m; option: '
           f'`contact_keeps_limit` | largest bend; lowest distance above ground + clearance '
           f'| {c.group(1)}°; {signed(float(c.group(3)))} m | {c.group(2)}°; {signed(float(c.group(4)))} m |']
    return '\n'.join(out)


def detect_object(cli, tmp, body, fixture):
    """`tailbone detect --json` on a fixture: its appendages."""
    return json.loads(run(cli, 'detect', fixture_glb(cli, tmp, fixture, body), '--json')).get('appendages', [])


LONG_KEYS = ('elongation', 'slenderness', 'flatness', 'leave')


def long_row(label, apps):
    return (f'| {label} | ' + ', '.join(dict.fromkeys(f"{a['kind']} ({a['decision']})" for a in apps)) + ' | '
            + ' | '.join('–'.join(dict.fromkeys(f'{v:.2f}' for v in (min(a[k] for a in apps), max(a[k] for a in apps))))
                         for k in LONG_KEYS) + ' |')


def detection_long_rule(cli, tmp):
    """docs/detection.md, classification rules 6-7 ("long", "not a sheet",
    "leaves the trunk"): `tailbone detect --json` on every fixture on
    synth:plain: a curled tail, a cape, a scabbard (each fixture's largest
    appendage, whatever it was read as), and the range over every tail
    found."""
    out = ['| object (fixture on synth:plain) | kind (decision) | elongation | slenderness | flatness | leave |',
           '|---|---|---|---|---|---|']
    tails, rows = [], {}
    names = [l.split()[0] for l in run(cli, 'synth', '--fixtures').splitlines() if l.strip()]
    shown = ('curl_shell_nearest', 'cape_only', 'scabbard_only')  # each: its largest appendage, as read
    for fx in names:
        apps = detect_object(cli, tmp, 'synth:plain', fx)
        tails += [a for a in apps if a['kind'] == 'tail']
        apps = [a for a in apps if a['kind'] != 'body']
        if fx in shown and apps:
            rows[fx] = [long_row(f'`{fx}`', [max(apps, key=lambda a: a['vertex_count'])])]
    for fx in shown:
        out += rows.get(fx) or [f'| `{fx}` | nothing but body found | | | | |']
    out.append(long_row(f'every tail found in the {len(names)} fixtures ({len(tails)}), range', tails))
    return '\n'.join(out)


def detection_long_rule_corpus(cli, tmp):
    """docs/detection.md, rules 6-7 on real bodies: `tailbone detect --json`
    on the Bone Demon (its chained tail of spiny vertebrae) and on fixtures
    hang_shell_leg and hang_fur_hips on RobotExpressive (their largest
    appendage: the tail, hanging past a hips bone at crotch height)."""
    out = ['| object | kind (decision) | elongation | slenderness | flatness | leave |', '|---|---|---|---|---|---|']
    demon = json.loads(run(cli, 'detect', corpus('characters/banter_Bone_Demon.glb'), '--json')).get('appendages', [])
    for a in demon:
        if a['decision'] == 'chain':
            out.append(long_row(f"banter_Bone_Demon's tail ({a['vertex_count']:,} vertices)", [a]))
    for fx in ('hang_shell_leg', 'hang_fur_hips'):
        robot = [a for a in detect_object(cli, tmp, corpus('clips/threejs_RobotExpressive.glb'), fx)
                 if a['kind'] not in ('body', 'head', 'limb')]
        if robot:
            a = max(robot, key=lambda a: a['vertex_count'])
            out.append(long_row(f"`{fx}` on RobotExpressive, its largest appendage ({a['vertex_count']:,} vertices)",
                                [a]))
    return '\n'.join(out)

def k_from_the_mesh(cli, tmp):
    """docs/fix.md "K from the mesh": what test_bake's
    low_poly_tail_gets_no_more_bones_than_its_rings_follow prints (the
    low-poly fixture at the SPEC's 0.1 H segments and at 0.05 H)."""
    text = test_prints('test_bake', 'low_poly_tail_gets_no_more_bones_than_its_rings_follow', tmp)
    rows = re.findall(r'segment ([\d.]+) H: K = (\d+), L = ([\d.]+) H, ([\d.]+) rings per segment( \(capped by the rings\))?',
                      text)
    if not rows:
        sys.exit('figures: test_bake printed no K-from-the-mesh rows')
    out = ['| `back_lowpoly_nearest` on synth:plain, segment asked | K | L | rings per segment |', '|---|---|---|---|']
    for seg, k, length, rings, capped in rows:
        out.append(f'| {seg} H | {k}' + (' (capped by the rings)' if capped else '') + f' | {length} H | {rings} |')
    return '\n'.join(out)


_PREVIEW = {}


def preview_measure(cli, tmp):
    """The demo's preview page as `make demo` writes it (`tailbone preview`
    on synth tail_leg and its repair), once per figures.py run: its bytes,
    the script's, the two GLBs' (base64) and the decoded arrays' share, and
    the edges the page's runtime stretches (`measure --json`, Walk)."""
    if _PREVIEW:
        return _PREVIEW
    broken, fixed, page = (os.path.join(tmp, n) for n in ('pv_broken.glb', 'pv_fixed.glb', 'pv.html'))
    run(cli, 'synth', '--variant', 'tail_leg', '-o', broken)
    run(cli, 'fix', broken, '-o', fixed, '-q')
    p = subprocess.run([cli, 'preview', broken, fixed, '-o', page], capture_output=True, text=True)
    if p.returncode != 0:
        if 'built without the preview page' in p.stderr:
            # the sanitizer build (TB_PREVIEW=OFF) or a build without
            # emscripten: not checked there, logged (the main build checks it)
            raise NotBuilt('this tailbone was built without the preview page')
        sys.exit(f'figures: tailbone preview failed: {p.stderr.strip()}')
    text = open(page, 'rb').read()
    head = b'<script type="application/json" id="tb-data">'
    d0 = text.index(head) + len(head)
    d1 = text.index(b'</script>', d0)
    b0 = text.index(b'<script>', d1) + len(b'<script>')
    b1 = text.index(b'</script>', b0)
    glb = sum(len(c['glb']) for c in json.loads(text[d0:d1])['characters'])
    c = json.loads(run(cli, 'measure', fixed, '--json', '--clip', 'Walk'))['clips'][0]
    _PREVIEW.update(page=len(text), script=b1 - b0, glb=glb, arrays=d1 - d0 - glb,
                    tail_edges=c['tail']['edges'], body_edges=c['body']['edges'])
    return _PREVIEW


def preview_browser(cli, tmp):
    """docs/preview.md, the browser test: tests/node/preview.test.mjs run
    fresh (headless Chromium), its summary written with TB_SUMMARY_JSON: how
    far the page's WebAssembly spring's tail tips are from the same C run
    natively (tests/preview_ref.c), at the baked parameters and after the
    sliders, and how far the sliders move the tips."""
    js = os.path.join(ROOT, 'tests', 'node', 'preview.test.mjs')
    ref = os.path.join(TESTS_DIR, 'preview_ref')
    if not os.path.exists(ref):
        raise NotBuilt(f'{ref} not built')
    sj = os.path.join(tmp, 'preview-summary.json')
    ptmp = os.path.join(tmp, 'preview-tmp')
    os.makedirs(ptmp, exist_ok=True)
    env = dict(os.environ, TB_CLI=os.path.abspath(cli), TB_PREVIEW_REF=ref, TB_TMP=ptmp, TB_SUMMARY_JSON=sj)
    p = subprocess.run(['node', js], capture_output=True, text=True, env=env)
    if p.returncode == 77:
        # no Chromium, no puppeteer-core, or a tailbone without the page:
        # not checked, logged (the main build with setup.sh's packages checks it)
        raise NotBuilt('the browser test skipped: ' + (p.stdout + p.stderr).strip().splitlines()[-1])
    if p.returncode != 0 or not os.path.exists(sj):
        sys.exit(f'figures: {js} failed:\n{(p.stdout + p.stderr)[-2000:]}')
    v = json.load(open(sj))
    tips = v['tips']
    worst = '; '.join(f"{t['label']}: {t['worst_l']:.1e} L" for t in tips)
    return (f"Tail tips of the page's WebAssembly spring against the same C code run natively, 180 frames at "
            f"60 fps of {tips[0]['clip']} ({tips[0]['links']} links), largest difference as a fraction of the "
            f"tail length L — {worst}; the sliders (root 2 Hz, gravity 6 m/s²) move the tips up to "
            f"{v['slider_change_l']:.2f} L.")


def kib(n):
    return f'{n / 1024:,.0f} KiB'


def mb(n):
    return f'{n / 1e6:.2f} MB'


def preview_page(cli, tmp):
    """docs/preview.md "Measured": the demo's page, part by part."""
    v = preview_measure(cli, tmp)
    return ('| part of the page | bytes | |\n|---|---|---|\n'
            f"| the whole page | {v['page']:,} | {mb(v['page'])} |\n"
            f"| the script (three.js + the runtime as WebAssembly, minified) | {v['script']:,} | {kib(v['script'])} |\n"
            f"| both GLBs as base64 (the page offers them for download) | {v['glb']:,} | {mb(v['glb'])} |\n"
            f"| the decoded arrays for the runtime (skeleton, skin, triangles, clips, tail mask, spring) and the page's "
            f"own markup | {v['page'] - v['script'] - v['glb']:,} | {mb(v['page'] - v['script'] - v['glb'])} |\n\n"
            f"The runtime stretches {v['tail_edges']:,} tail and {v['body_edges']:,} body edges of the repaired "
            "character every frame (`tailbone measure --json`).")


def readme_preview(cli, tmp):
    """README "Seeing it": the demo's page size in one sentence."""
    v = preview_measure(cli, tmp)
    return (f"The demo's page is {mb(v['page'])} ({v['page']:,} bytes; {kib(v['script'])} of it the script, "
            f"the rest the two GLBs and their decoded arrays); the runtime stretches "
            f"{v['tail_edges'] + v['body_edges']:,} edges a frame.")


def oracle_margins(cli, tmp):
    """docs/testing.md, "Independent oracles": how far inside its tolerance
    each oracle's test measured the tool on this run (what test_oracles,
    test_retarget and test_measure print; the tolerances are the tests')."""
    chains = re.findall(r'^(\S+)\s+K (\d+) = truth; joints off the centre line <= ([\d.]+) H, last joint ([\d.]+) H',
                        test_prints('test_oracles', 'chains_have_the_truths_k_and_joints_on_its_centre_line', tmp), re.M)
    turned = re.search(r'worst limb direction error ([\d.]+) deg',
                       test_prints('test_retarget', 'turnedCharacterLimbsFollowTheSourceTurnedByTheSkeletons', tmp))
    keys, jerk = {}, {}
    for kind in ('closed', 'gap'):
        k = re.search(r'baked keys vs a fresh simulation: worst ([\d.]+) deg over (\d+) keys x (\d+) bones',
                      test_prints('test_oracles', f'baked_keys_equal_a_fresh_simulation_{kind}_loop', tmp))
        j = re.search(r'elsewhere up to [\d.]+ \(ratio ([\d.]+)\)',
                      test_prints('test_oracles', f'{kind}_loop_wraps_as_smoothly_as_it_plays', tmp))
        if not k or not j:
            sys.exit(f'figures: test_oracles printed no {kind}-loop figures')
        keys[kind], jerk[kind] = k, j.group(1)
    if not chains or not turned:
        sys.exit('figures: test_oracles / test_retarget printed no chain or turned-target figures')
    out = ['| oracle | test | tolerance | measured on this run |', '|---|---|---|---|',
           f'| K and chain joints | `test_oracles` `chains_have_the_truths_k_and_joints_on_its_centre_line` '
           f'| K exact; joints ≤ 0.04 H off the centre line, last joint ≤ 0.06 H from the tip '
           f'| K = truth on all {len(chains)} variants; joints ≤ {max(float(c[2]) for c in chains):.4f} H, '
           f'last joint ≤ {max(float(c[3]) for c in chains):.4f} H |',
           f'| retarget limb fidelity, synthetic turned target | `test_retarget` '
           f'`turnedCharacterLimbsFollowTheSourceTurnedByTheSkeletons` | < 1° | {turned.group(1)}° |',
           '| baked keys against a fresh simulation | `test_oracles` `baked_keys_equal_a_fresh_simulation_{closed,gap}_loop` '
           '| 0.5° per bone and key | ' + '; '.join(
               f'{kind}: {keys[kind].group(1)}° over {keys[kind].group(2)} keys × {keys[kind].group(3)} bones'
               for kind in ('closed', 'gap')) + ' |',
           '| loop closure (jerk at the wrap / largest elsewhere) | `test_oracles` '
           '`{closed,gap}_loop_wraps_as_smoothly_as_it_plays` | ≤ 1.5 × | '
           + '; '.join(f'{kind}: {jerk[kind]} ×' for kind in ('closed', 'gap')) + ' |']
    tool = re.compile(r'p95 ([\d.]+) / [\d.]+, p99 ([\d.]+) / [\d.]+, min ([\d.]+) / [\d.]+, '
                      r'max ([\d.]+) / [\d.]+, torn (\d+) / \d+')
    bounds = re.compile(r'derived bounds: p95 \[([\d.]+), ([\d.]+)\], p99 \[([\d.]+), ([\d.]+)\], '
                        r'min \[([\d.]+), ([\d.]+)\], max \[([\d.]+), ([\d.]+)\], torn \[(\d+), (\d+)\]')
    for who, rel in (('xbot', 'clips/Xbot_agree_run_walk.glb'), ('soldier', 'clips/threejs_Soldier_rexport.glb')):
        corpus(rel)
        case = f'corpus_{who}_walk_body_stretch_equals_an_exact_recount'
        text = test_prints('test_measure', case, tmp)
        t, b = tool.search(text), bounds.search(text)
        if not t or not b:
            sys.exit(f'figures: test_measure {case} printed no figures')
        cells = [f'{q} {t.group(i + 1)} in [{b.group(2 * i + 1)}, {b.group(2 * i + 2)}]'
                 for i, q in enumerate(('p95', 'p99', 'min', 'max'))]
        out.append(f'| skin stretch against an exact recount, {os.path.basename(rel)} walk | `test_measure` `{case}` '
                   f'| within the bounds derived per sample (above) | ' + ', '.join(cells)
                   + f', torn {t.group(5)} in [{b.group(9)}, {b.group(10)}] |')
    return '\n'.join(out)


def spring_test_figures(cli, tmp):
    """docs/spring.md, "Beyond the article": what test_rt_spring prints for
    the fixed sub-step (the same motion at 30, 60 and 144 fps) and test_bake
    for the character's own axes (facing -Z against +Z)."""
    fps = re.search(r'frame-rate independence: 30 vs 60 fps ([\d.e+-]+) m, 60 vs 144 fps ([\d.e+-]+) m',
                    test_prints('test_rt_spring', 'spring_same_motion_at_30_60_144_fps_agrees_within_1cm', tmp))
    turn = re.search(r'facing -Z vs \+Z: largest tail key difference ([\d.]+) deg',
                     test_prints('test_bake', 'tail_moves_the_same_when_the_character_faces_minus_z', tmp))
    if not fps or not turn:
        sys.exit('figures: test_rt_spring / test_bake printed no frame-rate or facing figures')
    mm = [f'{1000 * float(x):.1f} mm' for x in fps.groups()]
    return '\n'.join(['| test | bound | measured |', '|---|---|---|',
                       '| `test_rt_spring` `spring_same_motion_at_30_60_144_fps_agrees_within_1cm`: tip of a 0.8 m, '
                       '8-bone tail, 0.5 m hip sweep with ±29° yaw | 1 cm | '
                       f'30 vs 60 fps {mm[0]}, 60 vs 144 fps {mm[1]} |',
                       '| `test_bake` `tail_moves_the_same_when_the_character_faces_minus_z`: the same character '
                       f'turned half a turn, largest tail key difference | 0.5° | {turn.group(1)}° |'])


BLOCKS = {
    'readme-demo': ('README.md', readme_demo),
    'readme-baked': ('README.md', readme_baked),
    'readme-corpus': ('README.md', readme_corpus),
    'preview-page': ('docs/preview.md', preview_page),
    'readme-preview': ('README.md', readme_preview),
    'preview-browser': ('docs/preview.md', preview_browser),
    'fix-tail-leg': ('docs/fix.md', fix_tail_leg),
    'synth-detection': ('docs/detection.md', synth_detection),
    'detection-spine-rule': ('docs/detection.md', detection_spine_rule),
    'detection-long-rule': ('docs/detection.md', detection_long_rule),
    'detection-long-rule-corpus': ('docs/detection.md', detection_long_rule_corpus),
    'synth-variants': ('docs/synth.md', synth_variants),
    'synth-truth-example': ('docs/synth.md', synth_truth_example),
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
    'fix-bar-short': ('docs/fix.md', fix_bar_short),
    'roles': ('docs/detection.md', roles_table),
    'fix-solver-experiment': ('docs/fix.md', fix_solver_experiment),
    'fix-bind-limit-experiment': ('docs/fix.md', fix_bind_limit_experiment),
    'spring-limit-tests': ('docs/fix.md', spring_limit_tests),
    'k-from-the-mesh': ('docs/fix.md', k_from_the_mesh),
    'oracle-margins': ('docs/testing.md', oracle_margins),
    'spring-test-figures': ('docs/spring.md', spring_test_figures),
    'fix-ramp-zone': ('docs/fix.md', fix_ramp_zone),
    'fix-collar-band-experiment': ('docs/fix.md', fix_collar_band_experiment),
    'fix-collar-ring': ('docs/fix.md', fix_collar_ring),
    'fix-welded-fox': ('docs/fix.md', fix_welded_fox),
    'vrm-measured': ('docs/vrm.md', vrm_measured),
    'fix-zone-experiment': ('docs/fix.md', fix_zone_experiment),
    'blender-converters': ('docs/blender.md', blender_converters),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--cli', default=os.path.join(ROOT, 'build', 'tailbone'))
    ap.add_argument('--check', action='store_true', help='fail when a committed block differs from a fresh run')
    ap.add_argument('--only', help='comma-separated block names')
    ap.add_argument('--tests-dir', help='where the test programs are (test_fixtures); default: CLI dir/tests')
    ap.add_argument('--slow', action='store_true',
                    help='with --check: also the blocks that take minutes (Blender); always on without --check')
    args = ap.parse_args()
    global SLOW
    SLOW = not args.check or args.slow or os.environ.get('TB_FIGURES_SLOW') == '1'
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
            # blocks whose figures --check may leave out (Blender): their shape
            # is checked always, whether or not the figures are recomputed
            bad = blender_block_shape(old, text) if name == 'blender-converters' and args.check else []
            if bad:
                stale.append(name)
                print(f'figures: {doc} [{name}] is not a well-formed generated block: ' + '; '.join(bad))
                continue
            try:
                new = '\n' + (gen(args.cli, tmp, old) if gen in (synth_variants, fix_bar_short) else gen(args.cli, tmp)) + '\n'
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
            except NotBuilt as e:
                print(f'figures: {doc} [{name}] NOT CHECKED: {e}')
                log = os.environ.get('TB_SKIP_LOG')
                if log:
                    with open(log, 'a') as f:
                        f.write(f'figures_current: block {name} not checked ({e})\n')
                continue
            except Slow as e:
                # --check without --slow: the block's shape is checked, its
                # figures are not: said, and logged as a skip (docs/testing.md)
                print(f'figures: {doc} [{name}] FIGURES NOT CHECKED ({e}): the block is present, labelled and has '
                      'every file\'s rows, but its figures are not recomputed; run with --slow (TB_FIGURES_SLOW=1) '
                      'or `make figures`')
                log = os.environ.get('TB_SKIP_LOG')
                if log:
                    with open(log, 'a') as f:
                        f.write(f'figures_current: block {name} not checked ({e}; TB_FIGURES_SLOW=1 checks it)\n')
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
