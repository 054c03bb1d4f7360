#!/usr/bin/env python3
"""One instant of a baked clip, skinned, as a picture: the input's skin and
the output's side by side, around the repaired vertices (a throw-away view
for reading a welded tail in motion; docs/fix.md, session 16).

    scripts/skinned_picture.py DUMP.json PICTURE.png [side|back] [size] [root]

root: frame the seam (repaired vertices on a triangle with an untouched
one) closely instead of the whole repaired skin.

DUMP.json is what `welded_edges` writes with DUMP=file (DUMPCLIP=name,
DUMPK=instant): both skins' positions at that instant, the bind positions,
the triangles and the repaired mask. Flat-shaded triangles with a z-buffer;
body grey, repaired skin blue, a triangle with an edge torn (SPEC C: its
length over the bind length, world scale taken as the body edges' median,
above 1.5 or below 0.67) red. Plain Python, PNG written by hand (zlib).
"""
import json, math, struct, sys, zlib


def png(path, w, h, rgb):
    raw = b''.join(b'\x00' + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    open(path, 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                           + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))


def dist(p, a, b):
    return math.sqrt(sum((p[3 * a + i] - p[3 * b + i]) ** 2 for i in range(3)))


def world_scale(pos, bind, tri, mask):
    r = []
    for t in range(0, min(len(tri), 30000), 3):
        a, b = tri[t], tri[t + 1]
        if not mask[a] and not mask[b]:
            bl = dist(bind, a, b)
            if bl > 0:
                r.append(dist(pos, a, b) / bl)
    r.sort()
    return r[len(r) // 2] if r else 1.0


def panel(pos, bind, tri, mask, view, box, size, ws):
    """rgb list (size × size) of one skin."""
    u_ax, v_ax, d_ax, flip = (2, 1, 0, -1) if view == 'side' else (0, 1, 2, 1)
    (u0, u1), (v0, v1) = box
    sc = size / max(u1 - u0, v1 - v0)
    img = [255] * (size * size * 3)
    zb = [-1e30] * (size * size)
    light = (0.3, 0.8, 0.5)
    for t in range(0, len(tri), 3):
        a, b, c = tri[t], tri[t + 1], tri[t + 2]
        P = [(pos[3 * i + u_ax] * flip, pos[3 * i + v_ax], pos[3 * i + d_ax] * (-flip if view == 'side' else -1))
             for i in (a, b, c)]  # back: seen from behind (the nearest has the smallest z)
        if all(not (u0 <= p[0] <= u1 and v0 <= p[1] <= v1) for p in P):
            continue
        torn = False
        for x, y in ((a, b), (b, c), (c, a)):
            bl = dist(bind, x, y)
            if bl > 0 and (mask[x] or mask[y]):
                r = dist(pos, x, y) / ws / bl
                torn |= r > 1.5 or r < 0.67
        e1 = [P[1][i] - P[0][i] for i in range(3)]
        e2 = [P[2][i] - P[0][i] for i in range(3)]
        n = (e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0])
        nl = math.sqrt(sum(x * x for x in n)) or 1
        shade = 0.35 + 0.65 * abs(sum(n[i] * light[i] for i in range(3)) / nl)
        base = (230, 40, 40) if torn else (90, 140, 230) if (mask[a] or mask[b] or mask[c]) else (190, 190, 190)
        col = [int(min(255, x * shade)) for x in base]
        S = [((p[0] - u0) * sc, (v1 - p[1]) * sc, p[2]) for p in P]
        xmin, xmax = max(0, int(min(s[0] for s in S))), min(size - 1, int(max(s[0] for s in S)) + 1)
        ymin, ymax = max(0, int(min(s[1] for s in S))), min(size - 1, int(max(s[1] for s in S)) + 1)
        den = (S[1][1] - S[2][1]) * (S[0][0] - S[2][0]) + (S[2][0] - S[1][0]) * (S[0][1] - S[2][1])
        if abs(den) < 1e-12:
            continue
        for y in range(ymin, ymax + 1):
            for x in range(xmin, xmax + 1):
                l0 = ((S[1][1] - S[2][1]) * (x - S[2][0]) + (S[2][0] - S[1][0]) * (y - S[2][1])) / den
                l1 = ((S[2][1] - S[0][1]) * (x - S[2][0]) + (S[0][0] - S[2][0]) * (y - S[2][1])) / den
                l2 = 1 - l0 - l1
                if l0 < 0 or l1 < 0 or l2 < 0:
                    continue
                z = l0 * S[0][2] + l1 * S[1][2] + l2 * S[2][2]
                if z > zb[y * size + x]:
                    zb[y * size + x] = z
                    img[3 * (y * size + x):3 * (y * size + x) + 3] = col
    return img


def main():
    d = json.load(open(sys.argv[1]))
    view = sys.argv[3] if len(sys.argv) > 3 else 'side'
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 360
    bind, tri, mask = d['bind'], d['tri'], d['mask']
    u_ax, flip = (2, -1) if view == 'side' else (0, 1)
    pos_out = d['pos'][1]
    ys = pos_out[1::3]
    pad = 0.12 * (max(ys) - min(ys))  # world units (the dump's height is the bind's)
    keep = [bool(x) for x in mask]
    if len(sys.argv) > 5 and sys.argv[5] == 'root':
        keep = [False] * len(mask)
        for t in range(0, len(tri), 3):
            ends = tri[t:t + 3]
            if any(mask[i] for i in ends) and not all(mask[i] for i in ends):
                for i in ends:
                    keep[i] = keep[i] or bool(mask[i])
        pad *= 0.3
    pts = [(pos_out[3 * i + u_ax] * flip, pos_out[3 * i + 1]) for i in range(len(mask)) if keep[i]]
    u0, u1 = min(p[0] for p in pts) - pad, max(p[0] for p in pts) + pad
    v0, v1 = min(p[1] for p in pts) - pad, max(p[1] for p in pts) + pad
    side = max(u1 - u0, v1 - v0)
    box = ((u0, u0 + side), (v1 - side, v1))
    imgs = []
    for s in (0, 1):
        ws = world_scale(d['pos'][s], bind, tri, mask)
        imgs.append(panel(d['pos'][s], bind, tri, mask, view, box, size, ws))
    w, gap = 2 * size + 8, 8
    rgb = [255] * (w * size * 3)
    for y in range(size):
        for s in (0, 1):
            x0 = s * (size + gap)
            rgb[3 * (y * w + x0):3 * (y * w + x0 + size)] = imgs[s][3 * y * size:3 * (y + 1) * size]
    png(sys.argv[2], w, size, rgb)


if __name__ == '__main__':
    main()
