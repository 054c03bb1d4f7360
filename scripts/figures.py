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
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


BLOCKS = {
    'readme-demo': ('README.md', readme_demo),
    'fix-tail-leg': ('docs/fix.md', fix_tail_leg),
    'synth-detection': ('docs/detection.md', synth_detection),
    'measure-example': ('docs/measure.md', measure_example),
    'measure-compare-example': ('docs/measure.md', measure_compare_example),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--cli', default=os.path.join(ROOT, 'build', 'tailbone'))
    ap.add_argument('--check', action='store_true', help='fail when a committed block differs from a fresh run')
    ap.add_argument('--only', help='comma-separated block names')
    args = ap.parse_args()
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
            new = '\n' + gen(args.cli, tmp) + '\n'
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
    return 1 if stale else 0


if __name__ == '__main__':
    sys.exit(main())
