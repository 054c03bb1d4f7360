# The repair itself, without UI: export the character to a temporary GLB, run
# `tailbone fix` on it, import the result and carry what changed (new bones,
# new weights, the baked tail keys) back onto the user's own objects.
#
# Why the command-line program and not the shared library through ctypes: the
# job is one call either way, but a subprocess cannot take Blender (and the
# artist's unsaved scene) down if it fails, it needs no C structs mirrored in
# Python that must follow every library version, and it is the very program
# the docs and tests describe (same options, same report). The cost is one
# glTF export and import through temporary files: a second or two.
import json
import os
import shutil
import subprocess
import tempfile

import bpy

DATA_KINDS = ('objects', 'meshes', 'armatures', 'materials', 'images', 'textures', 'actions',
              'node_groups', 'collections', 'cameras', 'lights')
TAG = '_tailbone_id'


class RepairError(Exception):
    """A message for the artist (shown as an error report)."""


def find_cli(pref_path=''):
    for cand in (pref_path, os.environ.get('TAILBONE', '')):
        if cand:
            cand = bpy.path.abspath(cand)
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                return cand
            raise RepairError("tailbone program not found at '%s' (add-on preferences or $TAILBONE)" % cand)
    found = shutil.which('tailbone')
    if not found:
        raise RepairError("tailbone program not found: set its path in the add-on's preferences "
                          "(Edit > Preferences > Add-ons > Tailbone), or put it on PATH")
    return found


def numpy_shim():
    # Blender 3.4's glTF importer names numpy.bool, removed in numpy 1.24 (which
    # Debian's Blender 3.4 runs with): without the alias no glTF imports at all.
    import numpy
    if 'bool' not in numpy.__dict__:
        numpy.bool = bool


def op_kwargs(op, **kw):
    """Only the keywords this Blender's operator knows (3.4 ... 4.x renamed some)."""
    known = op.get_rna_type().properties.keys()
    return {k: v for k, v in kw.items() if k in known}


def fix_args(s):
    """Command-line options from the add-on's settings (a TailboneSettings)."""
    a = ['--mode', s.mode.lower()]
    if not s.bake:
        a.append('--no-bake')
    if s.clips:
        a += ['--clips', bpy.path.abspath(s.clips)]
    if s.fps != 30:
        a += ['--fps', str(s.fps)]
    if not s.blend_auto:
        a += ['--blend-zone', '%g' % s.blend_zone]
    if not s.collar_auto:
        a += ['--collar-band', '%g' % s.collar_band]
    if s.smooth_pieces:
        a.append('--smooth-pieces')
    for opt, prop in (('--root-hz', 'root_hz'), ('--tip-ratio', 'tip_ratio'), ('--damping', 'damping'),
                      ('--gravity', 'gravity'), ('--carry', 'carry'), ('--bend-limit', 'bend_limit'),
                      ('--rest-curve', 'rest_curve'), ('--coupling', 'coupling')):
        v = getattr(s, prop)
        if abs(v - s.bl_rna.properties[prop].default) > 1e-6:
            a += [opt, '%g' % v]
    if not s.ground:
        a.append('--no-ground')
    return a


def run_fix(cli, src, dst, args):
    """Runs `tailbone fix`; returns (report dict, printed table)."""
    rep = dst + '.json'
    r = subprocess.run([cli, 'fix', src, '-o', dst, '--report', rep] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if l.strip()] or ['exit status %d' % r.returncode]
        raise RepairError(lines[-1].replace(src, 'the character'))
    with open(rep) as f:
        return json.load(f), r.stdout


def table_lines(report):
    """The detection table, one line per appendage, for the panel."""
    out = []
    for a in report.get('appendages', []):
        k = a.get('bones', 0)
        out.append('%-6s %-10s %5d v  on %-12s%s' % (a['kind'], a['decision'], a['vertex_count'],
                                                     a.get('attachment', '?'), ('  K=%d' % k) if k else ''))
    return out


def character_from_selection(context):
    """(armature, meshes) from the selection, or RepairError saying what is missing."""
    sel = list(context.selected_objects)
    if context.active_object and context.active_object not in sel:
        sel.append(context.active_object)
    if not sel:
        raise RepairError('Nothing is selected: select the character (its armature, or its meshes)')
    arms = [o for o in sel if o.type == 'ARMATURE']
    def arm_of(ob):
        for m in ob.modifiers:
            if m.type == 'ARMATURE' and m.object:
                return m.object
        return None
    skinned = [o for o in sel if o.type == 'MESH' and arm_of(o)]
    if not arms:
        arms = list({arm_of(o) for o in skinned})
    if not arms:
        raise RepairError("'%s' is not a rigged character: no armature, and no mesh with an Armature "
                          "modifier in the selection" % sel[0].name)
    if len(arms) > 1:
        raise RepairError('Several armatures are selected (%s): repair one character at a time'
                          % ', '.join(sorted(a.name for a in arms)))
    arm = arms[0]
    meshes = [o for o in skinned if arm_of(o) == arm]
    if not meshes:  # the armature alone: every mesh it deforms in this scene
        meshes = [o for o in context.scene.objects if o.type == 'MESH' and arm_of(o) == arm]
    if not meshes:
        raise RepairError("Armature '%s' deforms no mesh: a rigged character needs meshes with an "
                          "Armature modifier on it" % arm.name)
    if not any(len(m.vertex_groups) for m in meshes):
        raise RepairError("The meshes of '%s' have no vertex groups (no skin weights): not a rigged "
                          "character yet" % arm.name)
    return arm, meshes


def import_gltf(path):
    numpy_shim()
    bpy.ops.import_scene.gltf(**op_kwargs(bpy.ops.import_scene.gltf, filepath=path,
                                          bone_heuristic='TEMPERANCE', import_shading='NORMALS'))


def export_gltf(path):
    e = bpy.ops.export_scene.gltf
    e(**op_kwargs(e, filepath=path, export_format='GLB', use_selection=True, export_extras=True,
                  export_animations=True, export_anim_single_armature=True, export_animation_mode='ACTIONS',
                  export_apply=False, export_yup=True, export_attributes=True, export_skins=True, export_morph=True))


def snapshot():
    return {k: set(getattr(bpy.data, k)) for k in DATA_KINDS}


def remove_new(before):
    """Deletes every datablock made since `before` (the temporary import)."""
    for k in ('objects', 'collections', 'meshes', 'armatures', 'actions', 'materials', 'node_groups',
              'textures', 'images', 'cameras', 'lights'):
        coll = getattr(bpy.data, k)
        for block in set(coll) - before[k]:
            coll.remove(block)


def deform_weights(ob, vi, names, bones):
    """{bone: weight} of vertex vi on deform bones, the 4 largest, normalised (as glTF keeps them)."""
    w = [(names[g.group], g.weight) for g in ob.data.vertices[vi].groups
         if g.group in names and names[g.group] in bones and g.weight > 0]
    w.sort(key=lambda x: -x[1])
    w = w[:4]
    s = sum(x[1] for x in w)
    return {n: x / s for n, x in w} if s > 0 else {}


def carry_bones(arm, new_arm, added):
    """Adds the bones `added` (names, parents first) to `arm` with new_arm's rest placement."""
    m = arm.matrix_world.inverted() @ new_arm.matrix_world
    m3 = m.to_3x3()
    bones = new_arm.data.bones
    ebs = arm.data.edit_bones
    for name in added:
        src = bones[name]
        eb = ebs.get(name) or ebs.new(name)
        eb.head = m @ src.head_local
        eb.tail = m @ src.tail_local
        eb.align_roll(m3 @ src.matrix_local.to_3x3().col[2])
        eb.use_deform = src.use_deform
        eb.use_connect = False
        if src.parent:
            eb.parent = ebs[src.parent.name]
            if hasattr(eb, 'layers'):  # Blender < 4: the parent's layers
                eb.layers = ebs[src.parent.name].layers


ID_ATTR = '_TBID'  # each vertex's own index; Blender exports it as the glTF attribute _TBID (3.4: __TBID)


def glb_weights(path):
    """{tag: (ids, joints, weights)} per skinned mesh node of a GLB, read
    directly (Blender 3.4's importer drops custom attributes): ids = each glTF
    vertex's _TBID (the Blender vertex it came from), joints as names."""
    import struct
    import numpy as np
    with open(path, 'rb') as f:
        data = f.read()
    n = struct.unpack_from('<I', data, 12)[0]
    doc = json.loads(data[20:20 + n])
    bin_ = data[20 + n + 8:] if len(data) > 20 + n else b''
    ctype = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
    width = {'SCALAR': 1, 'VEC2': 2, 'VEC3': 3, 'VEC4': 4}

    def read(i):
        a = doc['accessors'][i]
        dt, w = np.dtype(ctype[a['componentType']]), width[a['type']]
        bv = doc['bufferViews'][a['bufferView']]
        stride = bv.get('byteStride') or dt.itemsize * w
        off = bv.get('byteOffset', 0) + a.get('byteOffset', 0)
        rows = np.ndarray((a['count'], w), dt, bin_, off, (stride, dt.itemsize))
        out = rows.astype(np.float64)
        if a.get('normalized'):
            out /= np.iinfo(dt).max
        return out

    res = {}
    for node in doc.get('nodes', []):
        tag = (node.get('extras') or {}).get(TAG)
        if tag is None or 'mesh' not in node or 'skin' not in node:
            continue
        names = [doc['nodes'][j].get('name', '') for j in doc['skins'][node['skin']]['joints']]
        for prim in doc['meshes'][node['mesh']]['primitives']:
            at = prim['attributes']
            key = next((k for k in at if k.lstrip('_') == ID_ATTR.lstrip('_')), None)
            if key is None or 'JOINTS_0' not in at:
                continue
            ids = read(at[key])[:, 0].round().astype(int)
            js = [read(at[k]).astype(int) for k in sorted(at) if k.startswith('JOINTS_')]
            ws = [read(at[k]) for k in sorted(at) if k.startswith('WEIGHTS_')]
            res.setdefault(tag, []).append((ids, names, np.hstack(js), np.hstack(ws)))
    return res


def tag_vertices(ob):
    """A float point attribute holding each vertex's index (removed after export)."""
    me = ob.data
    if ID_ATTR in me.attributes:
        me.attributes.remove(me.attributes[ID_ATTR])
    at = me.attributes.new(ID_ATTR, 'FLOAT', 'POINT')
    at.data.foreach_set('value', [float(i) for i in range(len(me.vertices))])


def untag_vertices(ob):
    me = ob.data
    if me and ID_ATTR in me.attributes:
        me.attributes.remove(me.attributes[ID_ATTR])


def carry_weights(ob, prims, bones):
    """Vertices whose deform weights the repair changed take the new ones.
    Returns (vertices changed, vertices absent from the repaired file)."""
    names = {g.index: g.name for g in ob.vertex_groups}
    new_of = {}
    for ids, joint_names, js, ws in prims:
        for r in range(len(ids)):
            w = {}
            for j, x in zip(js[r], ws[r]):
                if x > 0:
                    w[joint_names[j]] = w.get(joint_names[j], 0.0) + float(x)
            s = sum(w.values())
            w = {k: v / s for k, v in w.items()} if s > 0 else {}
            i = int(ids[r])
            prev = new_of.get(i)
            if prev is None or prev == deform_weights(ob, i, names, bones):
                new_of[i] = w  # a changed copy wins over an unchanged one
    changed = missing = 0
    for v in ob.data.vertices:
        new = new_of.get(v.index)
        if new is None:
            missing += 1
            continue
        old = deform_weights(ob, v.index, names, bones)
        if all(abs(old.get(k, 0) - new.get(k, 0)) < 2e-3 for k in set(old) | set(new)):
            continue
        for g in list(v.groups):
            if names.get(g.group) in bones:
                ob.vertex_groups[g.group].remove([v.index])
        for n, w in new.items():
            vg = ob.vertex_groups.get(n) or ob.vertex_groups.new(name=n)
            vg.add([v.index], w, 'REPLACE')
        changed += 1
    return changed, missing


def copy_fcurve(dst_action, fc, group):
    old = dst_action.fcurves.find(fc.data_path, index=fc.array_index)
    if old:
        dst_action.fcurves.remove(old)
    nf = dst_action.fcurves.new(fc.data_path, index=fc.array_index, action_group=group)
    n = len(fc.keyframe_points)
    nf.keyframe_points.add(n)
    for attr in ('co', 'handle_left', 'handle_right'):
        buf = [0.0] * (2 * n)
        fc.keyframe_points.foreach_get(attr, buf)
        nf.keyframe_points.foreach_set(attr, buf)
    for attr in ('interpolation',):
        buf = [0] * n
        fc.keyframe_points.foreach_get(attr, buf)
        nf.keyframe_points.foreach_set(attr, buf)
    nf.update()


def carry_actions(arm, new_arm, added):
    """The baked tail keys: each animation of the repaired file (an NLA track of
    the imported armature, named after it) gives its new bones' F-curves to the
    user's action of that name; a clip the user did not have is added whole.
    Keys of an added bone need no conversion: its rest is the imported one, and
    its parent's deformation is the same in both armatures."""
    ad = new_arm.animation_data
    pairs = []
    if ad:
        for t in ad.nla_tracks:
            for s in t.strips:
                if s.action:
                    pairs.append((t.name, s.action))
        if ad.action and all(a != ad.action for _, a in pairs):
            pairs.append((ad.action.name, ad.action))
    done = []
    prefixes = tuple('pose.bones["%s"]' % b for b in added)
    for name, src in pairs:
        dst = bpy.data.actions.get(name)
        if dst is None:
            continue  # not one of the user's actions (see docs: clip libraries)
        n = 0
        for fc in src.fcurves:
            if fc.data_path.startswith(prefixes):
                copy_fcurve(dst, fc, fc.data_path.split('"')[1])
                n += 1
        if n:
            done.append(name)
    return done


def repair(context, arm, meshes, settings, cli):
    """The whole job on (arm, meshes). Returns a dict for the UI."""
    scene = context.scene
    view_layer = context.view_layer
    prev_mode = context.mode
    prev_active = view_layer.objects.active
    prev_sel = [o for o in scene.objects if o.select_get()]
    if prev_mode != 'OBJECT':
        bpy.ops.object.mode_set(mode='OBJECT')
    objs = [arm] + list(meshes)
    tmp = tempfile.mkdtemp(prefix='tailbone-')
    before = snapshot()
    frame = scene.frame_current
    try:
        for o in scene.objects:
            o.select_set(False)
        for o in objs:
            o.select_set(True)
            o[TAG] = o.name
            if o.type == 'MESH':
                tag_vertices(o)
        view_layer.objects.active = arm
        src, dst = os.path.join(tmp, 'in.glb'), os.path.join(tmp, 'out.glb')
        export_gltf(src)
        for o in objs:
            del o[TAG]
            if o.type == 'MESH':
                untag_vertices(o)
        report, text = run_fix(cli, src, dst, fix_args(settings))
        result = {'report': report, 'text': text, 'bones': [], 'weights': 0, 'missing': 0, 'actions': []}
        if not report.get('changed'):
            return result
        import_gltf(dst)
        new = {o.get(TAG): o for o in set(bpy.data.objects) - before['objects'] if o.get(TAG)}
        new_arm = new.get(arm.name)
        if new_arm is None or new_arm.type != 'ARMATURE':
            raise RepairError('the repaired file has no armature for %s' % arm.name)
        added = [b.name for b in new_arm.data.bones if b.name not in arm.data.bones]
        # parents before children (bones iterate in that order)
        view_layer.objects.active = arm
        for o in scene.objects:
            o.select_set(o == arm)
        if added:
            bpy.ops.object.mode_set(mode='EDIT')
            carry_bones(arm, new_arm, added)
            bpy.ops.object.mode_set(mode='OBJECT')
            for name in added:
                arm.pose.bones[name].rotation_mode = new_arm.pose.bones[name].rotation_mode
        bones = set(arm.data.bones.keys())
        prims = glb_weights(dst)
        for ob in meshes:
            if ob.name not in prims:
                continue
            c, m = carry_weights(ob, prims[ob.name], bones)
            result['weights'] += c
            result['missing'] += m
        result['actions'] = carry_actions(arm, new_arm, added) if settings.bake else []
        result['bones'] = added
        return result
    finally:
        remove_new(before)
        for o in objs:
            if TAG in o:
                del o[TAG]
            if o.type == 'MESH':
                untag_vertices(o)
        shutil.rmtree(tmp, ignore_errors=True)
        scene.frame_set(frame)
        for o in scene.objects:
            o.select_set(o in prev_sel)
        view_layer.objects.active = prev_active
        if prev_mode == 'POSE' and prev_active == arm:
            bpy.ops.object.mode_set(mode='POSE')
