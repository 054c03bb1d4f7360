#!/usr/bin/env python3
"""Mutation check of the test suite (`make mutants`, docs/testing.md).

Each mutant in tests/mutants/list is one small change to one source file: an
exact snippet of today's code and its replacement. For each, this script
copies the checkout into build-mutants/tree (the checkout itself is never
written, so an interrupted run leaves it as it was), applies the change,
rebuilds in build-mutants/build, runs first the test named as the one that
checks that behaviour, then (if it passed) the rest of the suite, stopping at
the first failure, and prints killed/survived with the test that killed it.

A mutant whose snippet is no longer in the file (or is there more than once)
is reported as STALE, never skipped silently: fix the list.

  scripts/mutants.py                 run every mutant
  scripts/mutants.py --only ID,ID    run some
  scripts/mutants.py --check         only check that every snippet applies
  scripts/mutants.py --docs FILE     also put the table into FILE between
                                     <!-- mutants:begin --> and <!-- mutants:end -->
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, 'tests', 'mutants', 'list')
WORK = os.path.join(ROOT, 'build-mutants')
TREE = os.path.join(WORK, 'tree')
BUILD = os.path.join(WORK, 'build')
JOBS = os.environ.get('JOBS') or str(os.cpu_count() or 2)
TEST_TIMEOUT = int(os.environ.get('TB_MUTANT_TIMEOUT', '900'))


def parse_list(path):
    """[id] blocks of key = value lines; from/to take \\n and \\t escapes."""
    mutants, cur = [], None
    with open(path, encoding='utf-8') as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            m = re.match(r'^\[([A-Za-z0-9_.-]+)\]\s*$', line)
            if m:
                cur = {'id': m.group(1), 'line': no}
                mutants.append(cur)
                continue
            m = re.match(r'^(file|area|what|test|from|to)\s*=\s?(.*)$', line)
            if not m or cur is None:
                sys.exit(f'{path}:{no}: expected [id] or key = value, got: {line}')
            key, val = m.group(1), m.group(2)
            if key in ('from', 'to'):
                val = val.replace('\\n', '\n').replace('\\t', '\t')
            cur[key] = val
    ids = set()
    for mu in mutants:
        for key in ('file', 'area', 'what', 'test', 'from', 'to'):
            if key not in mu:
                sys.exit(f"{path}:{mu['line']}: [{mu['id']}] has no '{key} ='")
        if mu['id'] in ids:
            sys.exit(f"{path}:{mu['line']}: duplicate id {mu['id']}")
        ids.add(mu['id'])
    return mutants


def snippet_re(snippet):
    """The snippet as a pattern that ignores each line's indentation (a
    refactor that only re-indents the code leaves the mutant applying); it
    starts at a line's start, after its indentation (group 1)."""
    lines = snippet.split('\n')
    return re.compile(r'(?m)^([ \t]*)' + re.escape(lines[0].lstrip(' \t'))
                      + ''.join(r'\n[ \t]*' + re.escape(l.lstrip(' \t')) for l in lines[1:]))


def matches(text, mu):
    return list(snippet_re(mu['from']).finditer(text))


def mutate(text, mu):
    """text with the one match of the snippet replaced by `to` (its first
    line's indentation replaced by the match's)."""
    (m,) = matches(text, mu)
    return text[:m.start()] + m.group(1) + mu['to'].lstrip(' \t') + text[m.end():]


def applies(mu):
    """None when the snippet occurs exactly once (indentation aside), else why not."""
    p = os.path.join(ROOT, mu['file'])
    if not os.path.exists(p):
        return f"{mu['file']} does not exist"
    n = len(matches(open(p, encoding='utf-8').read(), mu))
    if n == 0:
        return 'snippet not found'
    if n > 1:
        return f'snippet found {n} times'
    return None


def sync_tree():
    """Copies the checkout's files (tracked and untracked, not ignored) into
    TREE, writing only those that differ, so the build stays incremental,
    and removes from TREE what the checkout no longer has."""
    files = subprocess.run(['git', 'ls-files', '-co', '--exclude-standard', '-z'], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split('\0')
    # files the checkout no longer has (a source moved to another folder)
    # go from the copy too, or its build would compile both
    keep = set(filter(None, files))
    for dirpath, dirnames, filenames in os.walk(TREE):
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path) and os.path.relpath(path, TREE) not in keep:
                os.remove(path)
    for rel in filter(None, files):
        src, dst = os.path.join(ROOT, rel), os.path.join(TREE, rel)
        if not os.path.isfile(src) or os.path.islink(src):
            continue
        data = open(src, 'rb').read()
        if os.path.exists(dst) and open(dst, 'rb').read() == data:
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, 'wb') as f:
            f.write(data)
        shutil.copymode(src, dst)
    # the suite finds ../shared beside the source tree and node_modules in it
    links = {os.path.join(TREE, 'node_modules'): os.path.join(ROOT, 'node_modules'),
             os.path.join(WORK, 'shared'): os.path.realpath(os.path.join(ROOT, '..', 'shared'))}
    for link, target in links.items():
        if os.path.exists(target) and not os.path.lexists(link):
            os.symlink(target, link)


def sh(cmd, timeout=None, env=None):
    t0 = time.time()
    os.makedirs(os.path.join(BUILD, 'tests', 'tmp'), exist_ok=True)
    try:
        p = subprocess.run(cmd, cwd=BUILD, capture_output=True, text=True, timeout=timeout, env=env,
                           errors='replace')
        return p.returncode, p.stdout + p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b'').decode(errors='replace') if isinstance(e.stdout, bytes) else (e.stdout or '')
        return 124, out, time.time() - t0


def build(targets=None):
    cmd = ['cmake', '--build', BUILD, '-j' + JOBS]
    for t in targets or []:
        cmd += ['--target', t]
    rc, out, _ = sh(cmd)
    return rc == 0, out


def test_env():
    env = dict(os.environ)
    env.update(TB_SHARED_DIR=os.path.join(WORK, 'no-such-shared' if NO_SHARED else 'shared'), TB_TMP=os.path.join(BUILD, 'tests', 'tmp'),
               TB_CLI=os.path.join(BUILD, 'tailbone'))
    env.pop('TB_SKIP_LOG', None)
    return env


def failed_cmocka(out):
    return re.findall(r'^\[  FAILED  \] (\S+)$', out, re.M) or re.findall(r'^\[  ERROR   \] (\S+)', out, re.M)


NAMED_TIMEOUT = {}  # named test -> seconds: 10x its unmutated run, at least 120 s (a mutant may make it hang)


def run_named(test):
    """Runs 'prog/case' (one cmocka test) or 'node_x' / 'prog' (a whole CTest
    test). Returns (failed, names of what failed, output)."""
    prog, _, case = test.partition('/')
    limit = min(NAMED_TIMEOUT.get(test, TEST_TIMEOUT), TEST_TIMEOUT)
    if prog.startswith('node_') or not case:
        rc, out, _ = sh(['ctest', '--output-on-failure', '--timeout', str(limit), '-R', '^' + prog + '$'],
                        timeout=limit + 60)
        if rc == 124:
            return True, [f'{prog} (timeout, {limit} s)'], out
        if 'No tests were found' in out:
            return None, [], out
        names = [f'{prog}/{c}' for c in failed_cmocka(out)] or [prog]
        return rc != 0, names, out
    env = test_env()
    env['TBT_FILTER'] = case
    os.makedirs(env['TB_TMP'], exist_ok=True)
    exe = os.path.join(BUILD, 'tests', prog)
    try:
        p = subprocess.run([exe], cwd=os.path.join(BUILD, 'tests'), capture_output=True, text=True,
                           env=env, timeout=limit, errors='replace')
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        return True, [f'{test} (timeout, {limit} s)'], ''
    if '[ PASSED ] 0 test' in out or re.search(r'\[==========\] 0 test', out):
        return None, [], out  # the filter matched nothing: the list names a test that is gone
    return rc != 0, [f'{prog}/{c}' for c in failed_cmocka(out)] or [test], out


def run_suite(exclude):
    """The whole CTest suite, stopping at the first failing test."""
    cmd = ['ctest', '--stop-on-failure', '--output-on-failure', '-j' + JOBS, '--timeout', str(TEST_TIMEOUT)]
    if exclude:
        cmd += ['-E', '^(' + '|'.join(re.escape(e) for e in exclude) + ')$']
    rc, out, _ = sh(cmd)
    if rc == 0:
        return False, [], out
    progs = re.findall(r'Test\s+#\d+: (\S+) \.+\*+(?:Failed|Exception|Timeout)', out)
    progs += re.findall(r'Test\s+#\d+: (\S+) \.+\s*\*\*\*(?:Failed|Timeout|Exception)', out)
    names = [f'{p}/{c}' for p in dict.fromkeys(progs) for c in failed_cmocka(out)] or list(dict.fromkeys(progs))
    return True, list(dict.fromkeys(names)) or ['(suite)'], out


BASELINE = {}  # CTest test -> passes on the unmutated tree (checked when it kills a mutant)


def baseline_passes(prog):
    if prog not in BASELINE:
        ok, _ = build()
        rc, out, _ = sh(['ctest', '--output-on-failure', '-R', '^' + re.escape(prog) + '$',
                         '--timeout', str(TEST_TIMEOUT)]) if ok else (1, '', 0)
        BASELINE[prog] = rc == 0 and 'No tests were found' not in out
        print(f"  baseline: {prog} {'passes' if BASELINE[prog] else 'FAILS'} on the unmutated tree", flush=True)
    return BASELINE[prog]


# Kept results are committed beside the list, so that the table in
# docs/testing.md can be rewritten (--table) and the pending mutants found
# (--pending) in any checkout: a result counts only while the mutant, its
# named test and its file are byte for byte what they were (key()), and says
# at which commit it was run.
RESULTS = os.path.join(ROOT, 'tests', 'mutants', 'results.json')
NO_SHARED = False  # --no-shared: the named tests run as if ../shared were absent


def test_source(test):
    """The file that holds the named test: tests/PROG.c or tests/node/X.test.mjs."""
    prog = test.split('/')[0]
    if prog.startswith('node_'):
        return os.path.join('tests', 'node', prog[len('node_'):] + '.test.mjs')
    return os.path.join('tests', prog + '.c')


def key(mu):
    """A result stays valid while the mutant, its file and the file of its
    named test are unchanged."""
    h = hashlib.sha1()
    for k in ('file', 'from', 'to', 'test'):
        h.update(mu[k].encode() + b'\0')
    for rel in (mu['file'], test_source(mu['test'])):
        p = os.path.join(ROOT, rel)
        h.update(open(p, 'rb').read() if os.path.exists(p) else b'(absent)')
    return h.hexdigest()


def run_at():
    """The commit the tree copy was made from, '+' when the checkout had
    changes (tracked or untracked) beside it, and the UTC date."""
    head = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip() or '?'
    dirty = subprocess.run(['git', 'status', '--porcelain'], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return head + ('+' if dirty else ''), time.strftime('%Y-%m-%d', time.gmtime())


def table(results):
    rows = ['| id | area | mutation | result | killed by | run at |', '|---|---|---|---|---|---|']
    for mu, res, by, at in results:
        what = mu['what'].replace('|', '\\|')
        rows.append(f"| {mu['id']} | {mu['area']} | {what} | {res} | {by} | {at} |")
    return '\n'.join(rows)


def saved_at(r):
    return f"`{r['commit']}` {r['date']}" if r.get('commit') else ''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--only', help='comma-separated mutant ids')
    ap.add_argument('--check', action='store_true', help='only check that every snippet applies once')
    ap.add_argument('--table', action='store_true',
                    help='run nothing: write the table from the kept results (others show as not run)')
    ap.add_argument('--pending', action='store_true',
                    help='run only the mutants without a kept result for the same snippet, file and test')
    ap.add_argument('--docs', help='file whose mutants:begin/end block receives the table')
    ap.add_argument('--list', default=LIST)
    ap.add_argument('--no-shared', action='store_true',
                    help='run only the named cmocka tests, without ../shared (the self-contained suite); '
                         'results are printed, not kept')
    args = ap.parse_args()
    global NO_SHARED, RESULTS
    NO_SHARED = args.no_shared
    if NO_SHARED:
        RESULTS = os.path.join(WORK, 'results-no-shared.json')
        args.docs = None
    mutants = parse_list(args.list)
    if args.only:
        want = set(args.only.split(','))
        unknown = want - {m['id'] for m in mutants}
        if unknown:
            sys.exit('no such mutant: ' + ', '.join(sorted(unknown)))
        mutants = [m for m in mutants if m['id'] in want]

    if args.pending:
        saved0 = json.load(open(RESULTS)) if os.path.exists(RESULTS) else {}
        mutants = [m for m in mutants if applies(m) or m['id'] not in saved0
                   or saved0[m['id']]['key'] != key(m)]
        args.only = ','.join(m['id'] for m in mutants) or None
        print('pending: ' + (args.only or 'none'))
        if not mutants:
            return 0
    stale = [(mu, applies(mu)) for mu in mutants]
    stale = [(mu, why) for mu, why in stale if why]
    for mu, why in stale:
        print(f"STALE {mu['id']} ({mu['file']}): {why}; tests/mutants/list line {mu['line']}")
    if args.check:
        saved = json.load(open(RESULTS)) if os.path.exists(RESULTS) else {}
        current = [mu['id'] for mu in mutants if not applies(mu) and mu['id'] in saved
                   and saved[mu['id']]['key'] == key(mu)]
        print(f'{len(mutants)} mutants, {len(stale)} stale; {len(current)} with a kept result for today\'s code, '
              f'{len(mutants) - len(current)} to run again (make mutants-pending; informational, not a failure)')
        again = [mu['id'] for mu in mutants if mu['id'] not in current]
        if again:
            print('to run again: ' + ', '.join(again))
        return 1 if stale else 0

    if args.table:
        saved = json.load(open(RESULTS)) if os.path.exists(RESULTS) else {}
        results = []
        for mu in mutants:
            r = saved.get(mu['id'])
            ok = r and not applies(mu) and r['key'] == key(mu)
            results.append((mu, r['result'], r['by'], saved_at(r)) if ok else (mu, 'not run', '', ''))
        return write_table(results, args, None)

    os.makedirs(TREE, exist_ok=True)
    sync_tree()
    commit, date = run_at()  # what the tree copy was made from
    # Ctrl-C: finish by restoring the tree copy (the checkout is never touched).
    def on_term(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    if not os.path.exists(os.path.join(BUILD, 'CMakeCache.txt')):
        subprocess.run(['cmake', '-S', TREE, '-B', BUILD, '-DCMAKE_BUILD_TYPE=RelWithDebInfo'],
                       check=True, stdout=subprocess.DEVNULL)
    ok, out = build()
    if not ok:
        print(out[-3000:])
        sys.exit('the unmutated tree does not build')
    # Baseline: every test named in the list passes unmutated, or a kill by
    # it would mean nothing.
    t_start = time.time()
    for test in dict.fromkeys(mu['test'] for mu in mutants):
        t0 = time.time()
        failed, names, out = run_named(test)
        NAMED_TIMEOUT[test] = max(120, round(10 * (time.time() - t0)))
        if failed is None:
            sys.exit(f'tests/mutants/list names {test}, which does not exist')
        if failed:
            print(out[-3000:])
            sys.exit(f'baseline: {test} fails on the unmutated tree')
    print(f'baseline: the {len(set(m["test"] for m in mutants))} named tests pass '
          f'({time.time() - t_start:.0f} s)')

    results = []
    ran_ids = set()
    stale_ids = {mu['id'] for mu, _ in stale}
    saved = json.load(open(RESULTS)) if os.path.exists(RESULTS) else {}
    try:
        for i, mu in enumerate(mutants, 1):
            if mu['id'] in stale_ids:
                results.append((mu, 'STALE', 'snippet no longer applies', ''))
                continue
            t0 = time.time()
            ran_ids.add(mu['id'])
            path = os.path.join(TREE, mu['file'])
            pristine = open(os.path.join(ROOT, mu['file']), encoding='utf-8').read()
            try:
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(mutate(pristine, mu))
                prog = mu['test'].split('/')[0]
                targets = ['tailbone'] + ([] if prog.startswith('node_') else [prog])
                ok, out = build(targets)
                if not ok:
                    res, by = 'NO BUILD', (re.findall(r'error: .*', out) or ['?'])[0][:80]
                else:
                    failed, names, _ = run_named(mu['test'])
                    if not failed and '/' in mu['test'] and not NO_SHARED:
                        # the rest of the named test's program next: cheap
                        failed, names, _ = run_named(prog)
                        if failed:
                            names = [n + ' (same program)' for n in names]
                    if failed and not names[0].endswith('(same program)'):
                        res, by = 'killed', ', '.join(dict.fromkeys(names)) + ' (direct)'
                    elif failed:
                        res, by = 'killed', ', '.join(dict.fromkeys(names))
                    elif NO_SHARED:
                        res, by = 'SURVIVED', '(named test only, no ../shared)'
                    else:
                        ok, out = build()
                        # mutants_list checks the list against the (mutated) tree:
                        # it fails for every mutant and would say nothing
                        failed, names, _ = run_suite([prog, 'mutants_list']) if ok else (True, ['(build)'], out)
                        res, by = ('killed', ', '.join(names)) if failed else ('SURVIVED', '')
            finally:
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(pristine)
            if res == 'killed' and not by.endswith('(direct)') and '(same program)' not in by:
                # killed elsewhere in the suite: that kill counts only if the
                # killing test passes on the unmutated tree
                bad = [p for p in dict.fromkeys(n.split('/')[0].split(' ')[0] for n in by.split(', '))
                       if not baseline_passes(p)]
                if bad:
                    res, by = 'UNCLEAR', by + '; but ' + ', '.join(bad) + ' fails unmutated too'
            saved[mu['id']] = {'key': key(mu), 'result': res, 'by': by, 'seconds': round(time.time() - t0),
                               'commit': commit, 'date': date}
            results.append((mu, res, by, saved_at(saved[mu['id']])))
            with open(RESULTS, 'w') as f:
                json.dump(saved, f, indent=1, sort_keys=True)
                f.write('\n')
            print(f"[{i}/{len(mutants)}] {mu['id']}: {res} {by} ({time.time() - t0:.0f} s)", flush=True)
    except KeyboardInterrupt:
        print('interrupted: the tree copy is restored; the checkout was never written')
    build()
    if args.only and not NO_SHARED:
        # the table covers the whole list: earlier results for unchanged
        # mutants (same snippet, same file) are kept, others show as not run
        ran = {mu['id'] for mu, *_ in results}
        for mu in parse_list(args.list):
            if mu['id'] in ran:
                continue
            r = saved.get(mu['id'])
            if r and os.path.exists(os.path.join(ROOT, mu['file'])) and r['key'] == key(mu):
                results.append((mu, r['result'], r['by'], saved_at(r)))
            else:
                results.append((mu, 'not run', '', ''))
        order = {mu['id']: i for i, mu in enumerate(parse_list(args.list))}
        results.sort(key=lambda x: order[x[0]['id']])

    return write_table(results, args, t_start, len(ran_ids))


def write_table(results, args, t_start, ran=0):
    killed = sum(1 for _, r, _, _ in results if r == 'killed')
    direct = sum(1 for _, r, b, _ in results if r == 'killed' and b.endswith('(direct)'))
    n = sum(1 for _, r, _, _ in results if r != 'not run')
    summary = (f'{n} mutants: {killed} killed ({direct} by the test that checks that behaviour), '
               f"{sum(1 for _, r, _, _ in results if r == 'SURVIVED')} survived, "
               f"{sum(1 for _, r, _, _ in results if r == 'UNCLEAR')} unclear (killed only by a test that fails unmutated), "
               f"{sum(1 for _, r, _, _ in results if r == 'STALE')} stale, "
               f"{sum(1 for _, r, _, _ in results if r == 'NO BUILD')} did not build, "
               f"{sum(1 for _, r, _, _ in results if r == 'not run')} not run"
               + (f'; this run: {ran} of them, {time.time() - t_start:.0f} s' if t_start else ''))
    text = table(results) + '\n\n' + summary + '\n'
    print('\n' + text)
    with open(os.path.join(WORK, 'mutants.md'), 'w') as f:
        f.write(text)
    if args.docs:
        doc = open(args.docs, encoding='utf-8').read()
        begin, end = '<!-- mutants:begin -->', '<!-- mutants:end -->'
        if begin not in doc or end not in doc:
            sys.exit(f'{args.docs}: no {begin} ... {end} block')
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        with open(args.docs, 'w', encoding='utf-8') as f:
            f.write(head + begin + '\n' + text + end + tail)
    return 0 if killed == n else 1


if __name__ == '__main__':
    sys.exit(main())
