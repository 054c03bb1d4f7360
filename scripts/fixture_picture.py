#!/usr/bin/env python3
"""Bind-pose picture of a `tailbone synth --onto` fixture: side and back views
of every skinned vertex (body grey, tail truth red, clothing blue).

    scripts/fixture_picture.py OUT.glb TRUTH.json PICTURE.png [size] [--fixed FIX.glb]

With --fixed (the output of `tailbone fix OUT.glb -o FIX.glb`), the colours
say what fix selected, read from FIX.glb's skin weights (a vertex is selected
when its largest weight is on a `Tail_*` joint): tail found red, tail missed
orange, selected but not tail (body or clothing taken into the tail) magenta,
clothing blue, body grey.

Plain Python (no numpy/matplotlib): decodes the GLB, draws the points and
writes the PNG itself (zlib).
"""
import json, struct, sys, zlib

COMP = {5126: ('f', 4), 5123: ('H', 2), 5121: ('B', 1), 5125: ('I', 4), 5122: ('h', 2), 5120: ('b', 1)}
NCOMP = {'SCALAR': 1, 'VEC2': 2, 'VEC3': 3, 'VEC4': 4, 'MAT4': 16}


def load(path):
    b = open(path, 'rb').read()
    jl = struct.unpack_from('<I', b, 12)[0]
    j = json.loads(b[20:20 + jl])
    off = 20 + jl
    bl = struct.unpack_from('<I', b, off)[0]
    return j, b[off + 8: off + 8 + bl]


def read(j, bin_, ai):
    a = j['accessors'][ai]
    bv = j['bufferViews'][a['bufferView']]
    fmt, size = COMP[a['componentType']]
    n = NCOMP[a['type']]
    stride = bv.get('byteStride', size * n)
    base = bv.get('byteOffset', 0) + a.get('byteOffset', 0)
    out = []
    for i in range(a['count']):
        v = struct.unpack_from('<%d%s' % (n, fmt), bin_, base + i * stride)
        if a.get('normalized'):
            mx = {'B': 255., 'H': 65535., 'b': 127., 'h': 32767.}[fmt]
            v = tuple(max(x / mx, -1.0) for x in v)
        out.append(v)
    return out


def selected(path, prims):
    """per vertex (in the truth's primitive order): largest weight on a Tail_* joint"""
    j, bin_ = load(path)
    skin_of = {}
    for n in j['nodes']:
        if 'mesh' in n and 'skin' in n:
            skin_of[n['mesh']] = j['skins'][n['skin']]['joints']
    out = []
    for p in prims:
        prim = j['meshes'][p['mesh']]['primitives'][p['primitive']]
        joints = skin_of.get(p['mesh'])
        at = prim['attributes']
        n = j['accessors'][at['POSITION']]['count']
        if joints is None or 'JOINTS_0' not in at:
            out += [False] * n
            continue
        js, ws = read(j, bin_, at['JOINTS_0']), read(j, bin_, at['WEIGHTS_0'])
        for jv, wv in zip(js, ws):
            k = max(range(4), key=lambda i: wv[i])
            out.append(j['nodes'][joints[jv[k]]].get('name', '').startswith('Tail_'))
    return out


def main():
    args = sys.argv[1:]
    fixed = None
    if '--fixed' in args:
        i = args.index('--fixed')
        fixed = args[i + 1]
        del args[i:i + 2]
    glb, truth_path, png = args[:3]
    size = int(args[3]) if len(args) > 3 else 420
    j, bin_ = load(glb)
    t = json.load(open(truth_path))
    pos = []
    for p in t['primitives']:
        prim = j['meshes'][p['mesh']]['primitives'][p['primitive']]
        pos += read(j, bin_, prim['attributes']['POSITION'])
    col = [(150, 150, 150)] * len(pos)
    for a in t['appendages']:
        c = (220, 30, 30) if a['class'] == 'tail' else (40, 80, 230)
        for v in a['vertices']:
            col[v] = c
    if fixed:
        sel = selected(fixed, t['primitives'])
        for v in range(len(pos)):
            tail = col[v] == (220, 30, 30)
            if tail and not sel[v]:
                col[v] = (255, 150, 0)
            elif sel[v] and not tail:
                col[v] = (220, 0, 220)
    up, fw, le = t['up'], t['forward'], t['left']
    dot = lambda p, d: p[0] * d[0] + p[1] * d[1] + p[2] * d[2]
    views = [(lambda p: (-dot(p, fw), dot(p, up))),    # side: the character faces left
             (lambda p: (-dot(p, le), dot(p, up)))]    # back: seen from behind, left on the left
    W, Hh = size * 2, size
    img = bytearray([255] * (W * Hh * 3))
    for vi, view in enumerate(views):
        xy = [view(p) for p in pos]
        xs = [a for a, _ in xy]
        ys = [b for _, b in xy]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        s = 0.92 * size / max(x1 - x0, y1 - y0, 1e-9)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        rank = {(150, 150, 150): 0, (40, 80, 230): 1, (220, 30, 30): 2}  # errors drawn last, on top
        order = sorted(range(len(pos)), key=lambda i: rank.get(col[i], 3))
        for i in order:
            x = int(vi * size + size / 2 + (xy[i][0] - cx) * s)
            y = int(Hh / 2 - (xy[i][1] - cy) * s)
            if vi * size <= x < (vi + 1) * size and 0 <= y < Hh:
                k = (y * W + x) * 3
                img[k:k + 3] = bytes(col[i])
    write_png(png, W, Hh, img)


def write_png(path, w, h, rgb):
    raw = b''.join(b'\0' + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))
    chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
                chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))


if __name__ == '__main__':
    main()
