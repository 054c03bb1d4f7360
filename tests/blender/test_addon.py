# The add-on tested in Blender itself (run by tests/blender/run.sh):
#   blender -b --factory-startup --python tests/blender/test_addon.py -- ZIP CLI WOLF.glb TMPDIR [SHOT.png]
# Installs the add-on from its zip, imports the corpus Wolf (GLB, then the same
# character exported to FBX), gives it a walk-like action, runs "Repair Tail"
# and checks in Blender: the Tail_* chain, its weights (and that no other
# vertex changed), that playing the action now moves the tail relative to the
# hips (before: it did not), that names, materials, custom properties and
# actions are kept, undo, the messages for a selection that is not a rigged
# character, and the exported GLB (Khronos validator, `tailbone measure`: 0 torn).
import json
import math
import os
import subprocess
import sys
import traceback

import bpy
from mathutils import Quaternion, Vector

ZIP, CLI, WOLF, TMP = sys.argv[sys.argv.index('--') + 1:][:4]
SHOT = (sys.argv[sys.argv.index('--') + 1:] + [None])[4]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
failures = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        failures.append(what)


def clear_scene():
    for k in ('objects', 'meshes', 'armatures', 'materials', 'actions', 'images', 'collections'):
        coll = getattr(bpy.data, k)
        for b in list(coll):
            coll.remove(b)


def character():
    arm = next(o for o in bpy.context.scene.objects if o.type == 'ARMATURE')
    meshes = [o for o in bpy.context.scene.objects if o.type == 'MESH'
              and any(m.type == 'ARMATURE' and m.object == arm for m in o.modifiers)]
    return arm, meshes


def select(objs, active):
    for o in bpy.context.scene.objects:
        o.select_set(o in objs)
    bpy.context.view_layer.objects.active = active


def add_walk(arm):
    """A one-second loop on the hips: yaw and roll sway, vertical bob (frames 1..25)."""
    arm.animation_data_create()
    act = bpy.data.actions.new('Sway')
    arm.animation_data.action = act
    pb = arm.pose.bones['Hips']
    pb.rotation_mode = 'QUATERNION'
    for f in range(1, 26, 2):
        ph = (f - 1) / 24 * 2 * math.pi
        pb.rotation_quaternion = Quaternion((0, 1, 0), 0.35 * math.sin(ph)) @ Quaternion((0, 0, 1), 0.12 * math.sin(2 * ph))
        pb.location = Vector((0, 0.04 * math.sin(2 * ph), 0))
        pb.keyframe_insert('rotation_quaternion', frame=f)
        pb.keyframe_insert('location', frame=f)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 25
    return act


def weights(meshes, bones):
    out = {}
    for ob in meshes:
        names = {g.index: g.name for g in ob.vertex_groups}
        for v in ob.data.vertices:
            out[(ob.name, v.index)] = {names[g.group]: round(g.weight, 5) for g in v.groups
                                       if names[g.group] in bones and g.weight > 0}
    return out


def hips_frame_positions(arm, meshes):
    """Every vertex, posed, in the hips' frame, at frames 1, 4, ..., 25 of the action."""
    out = []
    for f in range(1, 26, 3):
        bpy.context.scene.frame_set(f)
        dg = bpy.context.evaluated_depsgraph_get()
        hips = (arm.matrix_world @ arm.pose.bones['Hips'].matrix).inverted()
        pos = {}
        for ob in meshes:
            ev = ob.evaluated_get(dg)
            me = ev.to_mesh()
            m = hips @ ob.matrix_world
            for v in me.vertices:
                pos[(ob.name, v.index)] = m @ v.co
            ev.to_mesh_clear()
        out.append(pos)
    bpy.context.scene.frame_set(1)
    return out


def motion(frames, verts):
    """Largest displacement of these vertices in the hips' frame over the action."""
    return max((f[k] - frames[0][k]).length for f in frames[1:] for k in verts)


def height(meshes):
    zs = [(ob.matrix_world @ v.co).z for ob in meshes for v in ob.data.vertices]
    return max(zs) - min(zs)


def run_checks(label, expect_parent):
    arm, meshes = character()
    H = height(meshes)
    act = arm.animation_data.action
    body_bones = set(arm.data.bones.keys())
    names_before = sorted(o.name for o in bpy.data.objects)
    mats_before = {o.name: [s.material.name if s.material else None for s in o.material_slots] for o in meshes}
    props_before = {o.name: sorted(o.keys()) for o in [arm] + meshes}
    fcurves_before = len(act.fcurves)
    w_before = weights(meshes, body_bones)

    before_frames = hips_frame_positions(arm, meshes)
    select([arm] + meshes, arm)
    r = bpy.ops.tailbone.repair_tail()
    check(r == {'FINISHED'}, '%s: Repair Tail finished' % label)
    report = bpy.context.window_manager.tailbone_last_report
    print(report)
    check('tail' in report and 'chain' in report, '%s: the detection table is in the UI report (a tail, chain)' % label)

    tails = sorted(b.name for b in arm.data.bones if b.name.startswith('Tail_') and b.name != 'Tail_End')
    check(len(tails) >= 3, '%s: %d Tail_k bones added (>= 3)' % (label, len(tails)))
    chain_ok = all(arm.data.bones['Tail_%d' % (k + 1)].parent.name == ('Tail_%d' % k if k else expect_parent)
                   for k in range(len(tails)))
    check(chain_ok, '%s: Tail_1 hangs from %s and each Tail_k from Tail_k-1' % (label, expect_parent))

    bones = set(arm.data.bones.keys())
    w_after = weights(meshes, bones)
    tail = {k for k, w in w_after.items() if any(n.startswith('Tail_') for n in w)}
    check(len(tail) > 100, '%s: %d vertices weighted to Tail_* bones' % (label, len(tail)))
    unchanged = all(w_after[k] == w_before[k] for k in w_before if k not in tail)
    check(unchanged, '%s: every other vertex keeps its weights exactly' % label)
    sums_ok = all(abs(sum(w_after[k].values()) - 1) < 0.01 for k in tail)
    check(sums_ok, '%s: tail weights sum to 1' % label)
    # the chain lies along the tail: each bone head is near a tail vertex
    pts = [o.matrix_world @ o.data.vertices[i].co for o in meshes for (n, i) in tail if n == o.name]
    near = max(min((arm.matrix_world @ arm.data.bones[b].head_local - p).length for p in pts) for b in tails)
    check(near < 0.1 * H, '%s: every Tail_k head lies within %.3f H of the tail skin (< 0.1 H)' % (label, near / H))

    # kept: names, materials, custom properties, the action (tail keys added)
    check(sorted(o.name for o in bpy.data.objects) == names_before, '%s: object names unchanged, nothing left over' % label)
    check({o.name: [s.material.name if s.material else None for s in o.material_slots] for o in meshes} == mats_before,
          '%s: materials kept' % label)
    check({o.name: sorted(o.keys()) for o in [arm] + meshes} == props_before and arm.get('test_prop') == 42,
          '%s: custom properties kept' % label)
    tail_curves = [fc for fc in act.fcurves if fc.data_path.startswith('pose.bones["Tail_')]
    check(len(act.fcurves) == fcurves_before + len(tail_curves) and len(tail_curves) >= 4 * len(tails),
          "%s: action 'Sway' keeps its %d F-curves and gains %d tail F-curves" % (label, fcurves_before, len(tail_curves)))
    moved = motion(hips_frame_positions(arm, meshes), tail)
    still = motion(before_frames, tail)
    check(still < 0.2 * moved, '%s: before the repair the same vertices moved %.4f H in the hips frame' % (label, still / H))
    check(moved > 0.02 * H, '%s: playing the action moves the tail in the hips frame by %.3f H (> 0.02)' % (label, moved / H))


    # export what the artist would, and check it outside Blender
    out = os.path.join(TMP, label + '.glb')
    select([arm] + meshes, arm)
    bpy.ops.export_scene.gltf(filepath=out, export_format='GLB', use_selection=True)
    v = json.loads(subprocess.run(['node', os.path.join(ROOT, 'tests/blender/validate.mjs'), out],
                                  capture_output=True, text=True, check=True).stdout)
    check(v['errors'] == 0, '%s: exported GLB: Khronos validator %d errors %s' % (label, v['errors'], v['first']))
    m = json.loads(subprocess.run([CLI, 'measure', out, '--json'], capture_output=True, text=True, check=True).stdout)
    clip = [c for c in m['clips'] if c.get('name', c.get('clip')) == 'Sway' or len(m['clips']) == 1][0]
    print('measure:', json.dumps({k: clip[k] for k in ('tail_vertices', 'tail', 'body') if k in clip}))
    check(clip['tail_vertices'] > 100 and clip['tail']['torn'] == 0 and clip['body']['torn'] == 0,
          '%s: tailbone measure on the export: %d tail vertices, tail p99 %.3f max %.3f, 0 torn (body p99 %.3f)'
          % (label, clip['tail_vertices'], clip['tail']['p99'], clip['tail']['max'], clip['body']['p99']))
    return arm, meshes


def render_shot(arm, meshes, path):
    """The picture in docs/blender.md: the repaired Wolf mid-stride, tail swung."""
    scene = bpy.context.scene
    scene.frame_set(13)
    cam = bpy.data.objects.new('Cam', bpy.data.cameras.new('Cam'))
    scene.collection.objects.link(cam)
    cam.location = (3.6, 2.6, 1.5)  # behind and to the side: the Wolf faces -Y
    cam.rotation_euler = (Vector((0, 0.3, 0.9)) - cam.location).to_track_quat('-Z', 'Y').to_euler()
    cam.data.lens = 40
    scene.camera = cam
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.display.shading.light = 'STUDIO'
    scene.display.shading.color_type = 'MATERIAL'
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 480, 360, 100
    scene.render.image_settings.color_mode = 'BW'  # grey model on grey: one channel, a small PNG
    scene.render.image_settings.compression = 100
    scene.render.filepath = path
    bpy.ops.render.render(write_still=True)
    check(os.path.getsize(path) > 1000, 'screenshot rendered to %s' % path)


def main():
    # install from the zip, as an artist does from Edit > Preferences > Add-ons
    bpy.ops.preferences.addon_install(filepath=ZIP, overwrite=True)
    bpy.ops.preferences.addon_enable(module='tailbone_blender')
    bpy.context.preferences.addons['tailbone_blender'].preferences.cli_path = CLI
    check(hasattr(bpy.ops.tailbone, 'repair_tail'), 'add-on installed from the zip and enabled')

    clear_scene()
    # messages when the selection is not a rigged character
    for setup, expect in ((lambda: None, 'Nothing is selected'),
                          (lambda: bpy.ops.mesh.primitive_cube_add(), 'is not a rigged character')):
        select([], None)
        setup()
        try:
            bpy.ops.tailbone.repair_tail()
            check(False, 'refused: %s' % expect)
        except RuntimeError as e:
            check(expect in str(e), 'refused with a clear message: %s' % str(e).strip().splitlines()[-1])
    clear_scene()

    # GLB, through the add-on's own import with the Tail box off, then the operator
    bpy.ops.import_scene.tailbone_gltf(filepath=WOLF, tail=False)
    arm, meshes = character()
    arm['test_prop'] = 42
    add_walk(arm)
    fbx = os.path.join(TMP, 'wolf_sway.fbx')
    select([arm] + meshes, arm)
    bpy.ops.export_scene.fbx(filepath=fbx, use_selection=True, add_leaf_bones=False, bake_anim=True,
                             bake_anim_use_all_actions=False, bake_anim_use_nla_strips=False, use_custom_props=True)
    arm, meshes = run_checks('glb', 'Spine')
    if SHOT:
        render_shot(arm, meshes, SHOT)

    # the same character as FBX (bones reoriented by Blender's FBX importer)
    clear_scene()
    bpy.ops.import_scene.fbx(filepath=fbx, use_custom_props=True)
    arm, meshes = character()
    arm.animation_data.action.name = 'Sway'
    run_checks('fbx', 'Spine')

    # the import wrapper with the Tail box on
    clear_scene()
    r = bpy.ops.import_scene.tailbone_gltf(filepath=WOLF, tail=True)
    arm, _ = character()
    check(r == {'FINISHED'} and 'Tail_1' in arm.data.bones, 'File > Import > glTF 2.0 with Tail: the Wolf comes in with Tail_1..')


try:
    main()
except Exception:
    traceback.print_exc()
    failures.append('exception')
print('blender add-on test: %d failure(s)' % len(failures), flush=True)
sys.exit(1 if failures else 0)
