#!/usr/bin/env python3
"""Packs blender/tailbone_blender into OUT.zip: installable as a legacy add-on
(Edit > Preferences > Add-ons > Install, Blender 3.4+) and, through its
blender_manifest.toml, as an extension (Get Extensions > Install from Disk, 4.2+).
    python3 blender/make_zip.py build/tailbone_blender.zip"""
import os
import sys
import zipfile

out = sys.argv[1] if len(sys.argv) > 1 else 'tailbone_blender.zip'
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tailbone_blender')
tmp = out + '.tmp'
with zipfile.ZipFile(tmp, 'w', zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)):
        if name.endswith(('.py', '.toml')):
            z.write(os.path.join(src, name), 'tailbone_blender/' + name)
os.replace(tmp, out)
print(out)
