# tailbone's FBX converter, run by `tailbone fix` inside Blender in background
# mode:  blender -b --factory-startup --python-exit-code 1 --python fbx_convert.py -- IN OUT
# IN and OUT are .glb/.gltf or .fbx; the scene is emptied first, IN imported
# with Blender's own importer and OUT written with its exporter, every
# armature action included (each becomes one glTF animation / FBX take).
import json
import os
import struct
import sys

import bpy


def gltf_clip_rate(path):
    """The frame rate that puts every clip's end on a whole frame (both
    exporters sample clips on whole frames at the scene's rate: 24 fps would
    move the end of a 30 fps clip), among the usual rates; 60 if none does."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] == b'glTF':
        n = struct.unpack_from('<I', data, 12)[0]
        doc = json.loads(data[20:20 + n])
    else:
        doc = json.loads(data)
    ends = [max(doc['accessors'][s['input']].get('max', [0])[0] for s in a.get('samplers', []))
            for a in doc.get('animations', []) if a.get('samplers')]
    for fps in (24, 25, 30, 48, 50, 60, 120):
        if all(abs(t * fps - round(t * fps)) < 0.02 for t in ends):
            return fps
    return 60


def main(argv):
    src, dst = argv[-2], argv[-1]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ext_in, ext_out = os.path.splitext(src)[1].lower(), os.path.splitext(dst)[1].lower()
    if ext_in in ('.glb', '.gltf'):
        import numpy  # Blender 3.4's glTF importer still names numpy.bool (gone in numpy 1.24)
        if 'bool' not in numpy.__dict__:
            numpy.bool = bool
        # the scene's rate before the import, which turns seconds into frames with it
        bpy.context.scene.render.fps, bpy.context.scene.render.fps_base = gltf_clip_rate(src), 1.0
        bpy.ops.import_scene.gltf(filepath=src)
        # the importer stashes each animation on an NLA track named after it and
        # names the action "Anim_Object"; give the action the animation's name
        for ob in bpy.data.objects:
            for track in (ob.animation_data.nla_tracks if ob.animation_data else []):
                for strip in track.strips:
                    if strip.action and ob.type == 'ARMATURE':
                        strip.action.name = track.name
        # a clip whose first key is after 0 s keeps its start: the FBX exporter
        # writes each take from the action's first frame, so the range starts at 0
        for act in bpy.data.actions:
            if act.frame_range[0] > 0:
                act.use_frame_range = True
                act.frame_start, act.frame_end = 0, act.frame_range[1]
    elif ext_in == '.fbx':
        # the FBX importer sets the scene's rate to the file's;
        # automatic_bone_orientation off: bones keep the file's joint frames, so
        # clips and bind poses come back as they were written
        bpy.ops.import_scene.fbx(filepath=src, use_anim=True, ignore_leaf_bones=False,
                                 automatic_bone_orientation=False, anim_offset=0.0)
        # Blender names each take's action "Object|Take" (and writes takes as
        # "Object|Action"): the clip's own name is what follows the object's
        obs = sorted((o.name + '|' for o in bpy.data.objects), key=len, reverse=True)
        for act in bpy.data.actions:
            name = act.name
            for _ in range(2):
                name = next((name[len(p):] for p in obs if name.startswith(p)), name)
            act.name = name
    else:
        raise SystemExit('tailbone fbx: %s: not .glb, .gltf or .fbx' % src)
    if ext_out in ('.glb', '.gltf'):
        # every action that moves an armature's bones becomes one animation: a
        # track of its own (Blender 3.4's exporter takes single-strip tracks)
        for ob in bpy.data.objects:
            if ob.type != 'ARMATURE':
                continue
            bones = set(ob.data.bones.keys())
            acts = [a for a in bpy.data.actions
                    if any(fc.data_path.startswith('pose.bones["') and fc.data_path.split('"')[1] in bones
                           for fc in a.fcurves)]
            if not acts:
                continue
            ad = ob.animation_data or ob.animation_data_create()
            ad.action = None
            for t in list(ad.nla_tracks):
                ad.nla_tracks.remove(t)
            for a in acts:
                t = ad.nla_tracks.new()
                t.name = a.name
                t.strips.new(a.name, int(a.frame_range[0]), a)
        bpy.ops.export_scene.gltf(filepath=dst, export_format='GLB' if ext_out == '.glb' else 'GLTF_SEPARATE',
                                  export_animations=True, export_anim_single_armature=True,
                                  export_extras=True, export_yup=True)
    elif ext_out == '.fbx':
        # every action is a take; leaf bones off so a round trip adds no "_end" joints
        bpy.ops.export_scene.fbx(filepath=dst, add_leaf_bones=False, bake_anim=True,
                                 bake_anim_use_all_actions=True, bake_anim_use_nla_strips=False,
                                 bake_anim_force_startend_keying=True, bake_anim_simplify_factor=0.0,
                                 use_custom_props=True, path_mode='COPY', embed_textures=True,
                                 primary_bone_axis='Y', secondary_bone_axis='X', armature_nodetype='NULL')
    else:
        raise SystemExit('tailbone fbx: %s: not .glb, .gltf or .fbx' % dst)


main(sys.argv[sys.argv.index('--') + 1:] if '--' in sys.argv else sys.argv)
