# Tailbone for Blender: gives an auto-rigged character a real tail.
# View3D > Sidebar > Tailbone: "Repair Tail" on the selected character;
# File > Import > "glTF 2.0 with Tail" / "FBX with Tail". See docs/blender.md.
bl_info = {
    "name": "Tailbone",
    "author": "tailbone project",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "View3D > Sidebar > Tailbone; File > Import > glTF 2.0 / FBX with Tail",
    "description": "Repairs the tail of an auto-rigged character: Tail_* bones, weights, baked spring motion",
    "category": "Rigging",
}

import os

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from . import core


class TailbonePreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    cli_path: StringProperty(name="tailbone program", subtype='FILE_PATH',
                             description="The tailbone command-line program; empty: $TAILBONE, then PATH")

    def draw(self, context):
        self.layout.prop(self, "cli_path")


class TailboneSettings(bpy.types.PropertyGroup):
    mode: EnumProperty(name="Mode", default='CHAIN', items=(
        ('CHAIN', "Chain", "Tail_1..Tail_K bones along the tail, weights blended along it (SPEC A9)"),
        ('RIGID', "Rigid", "Tail bound 100% to the hips, no new bones (SPEC A8)")))
    bake: BoolProperty(name="Bake into actions", default=True,
                       description="Simulate the tail with the spring chain and key it into every action of the armature")
    clips: StringProperty(name="Clip library", subtype='FILE_PATH', default="",
                          description="Optional: a GLB whose clips are transferred first (tailbone fix --clips)")
    fps: IntProperty(name="Key rate", default=30, min=1, max=240, description="Baked tail keys per second")
    blend_auto: BoolProperty(name="Automatic blend", default=True,
                             description="SPEC 0.25 segments, widened to 0.375 then 0.5 when a baked clip tears")
    blend_zone: FloatProperty(name="Blend zone", default=0.25, min=0.05, max=0.5,
                              description="Weight blend half-width around each tail joint, in segments")
    collar_auto: BoolProperty(name="Automatic collar", default=True,
                              description="0.5 segments, widened when the seam of a welded tail tears")
    collar_band: FloatProperty(name="Collar band", default=0.5, min=0.0, max=2.0,
                               description="Blend from the body's weights at a welded tail's collar, in segments (0: none)")
    smooth_pieces: BoolProperty(name="Smooth pieces", default=False,
                                description="Smooth weights on a tail made of separate pieces too (default: one bone per piece)")
    root_hz: FloatProperty(name="Root frequency", default=0.9, min=0.01, max=100, unit='NONE',
                           description="Spring frequency at the tail's root, Hz (SPEC B: 0.9)")
    tip_ratio: FloatProperty(name="Tip ratio", default=0.5, min=0.01, max=10,
                             description="Tip frequency as a fraction of the root's (SPEC B: 0.5)")
    damping: FloatProperty(name="Damping", default=0.65, min=0.0, max=10, description="Damping ratio ζ (SPEC B: 0.65)")
    gravity: FloatProperty(name="Gravity", default=1.0, min=0.0, max=100, description="m/s² (SPEC B: 1)")
    carry: FloatProperty(name="Carry", default=50.0, min=0.0, max=180,
                         description="How far the tail is carried up from hanging, degrees (SPEC B: 50)")
    bend_limit: FloatProperty(name="Bend limit", default=30.0, min=1.0, max=180,
                              description="Largest bend per joint, degrees (SPEC B: 30)")
    rest_curve: FloatProperty(name="Rest curve", default=0.0, min=0.0, max=1.0, description="Curl of the rest arc (0: straight)")
    coupling: FloatProperty(name="Coupling", default=12.0, min=0.0, max=1000, description="Pull towards the rest arc, 1/s (SPEC B: 12)")
    ground: BoolProperty(name="Ground", default=True, description="Keep the tail above the ground at the soles")


def _report_lines(wm):
    return [l for l in wm.tailbone_last_report.split('\n') if l]


def run_repair(op, context, arm=None, meshes=None):
    """Shared by the operator and the import wrappers; returns {'FINISHED'} or {'CANCELLED'}."""
    s = context.scene.tailbone
    prefs = context.preferences.addons[__package__].preferences if __package__ in context.preferences.addons else None
    try:
        cli = core.find_cli(prefs.cli_path if prefs else '')
        if arm is None:
            arm, meshes = core.character_from_selection(context)
        res = core.repair(context, arm, meshes, s, cli)
    except core.RepairError as e:
        op.report({'ERROR'}, str(e))
        return {'CANCELLED'}
    rep = res['report']
    lines = core.table_lines(rep)
    tails = [a for a in rep.get('appendages', []) if a.get('decision') != 'untouched']
    if not rep.get('changed'):
        summary = "%s: nothing to repair (%s)" % (arm.name, rep.get('message', 'no tail found'))
    else:
        summary = "%s: %s; %d bone(s) added, %d vertices reweighted%s" % (
            arm.name, rep.get('message', ''), len(res['bones']), res['weights'],
            ("; tail keyed in " + ", ".join(res['actions'])) if res['actions'] else "")
        if res['missing']:
            summary += "; %d vertices not matched (left as they were)" % res['missing']
    context.window_manager.tailbone_last_report = "\n".join([summary] + lines)
    op.report({'INFO'}, summary)
    for a in tails:
        op.report({'INFO'}, "%s: %s" % (a['kind'], a['reason']))
    return {'FINISHED'}


class TAILBONE_OT_repair_tail(bpy.types.Operator):
    """Find the tail of the selected rigged character and give it Tail_* bones, weights and baked motion"""
    bl_idname = "tailbone.repair_tail"
    bl_label = "Repair Tail"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return context.mode in ('OBJECT', 'POSE')

    def execute(self, context):
        return run_repair(self, context)


class TAILBONE_OT_import_gltf(bpy.types.Operator, ImportHelper):
    """Import a glTF 2.0 character, repairing its tail as it comes in"""
    bl_idname = "import_scene.tailbone_gltf"
    bl_label = "Import glTF 2.0 with Tail"
    bl_options = {'REGISTER', 'UNDO'}
    filename_ext = ".glb"
    filter_glob: StringProperty(default="*.glb;*.gltf", options={'HIDDEN'})
    tail: BoolProperty(name="Tail", default=True, description="Repair the tail (settings: Sidebar > Tailbone)")

    def draw(self, context):
        self.layout.prop(self, "tail")
        draw_settings(self.layout, context.scene.tailbone)

    def execute(self, context):
        path = self.filepath
        if not self.tail:
            core.import_gltf(path)
            return {'FINISHED'}
        import tempfile, shutil
        prefs = context.preferences.addons[__package__].preferences if __package__ in context.preferences.addons else None
        tmp = tempfile.mkdtemp(prefix='tailbone-')
        try:
            cli = core.find_cli(prefs.cli_path if prefs else '')
            out = os.path.join(tmp, os.path.splitext(os.path.basename(path))[0] + '.glb')
            rep, _ = core.run_fix(cli, path, out, core.fix_args(context.scene.tailbone))
            core.import_gltf(out)
        except core.RepairError as e:
            self.report({'ERROR'}, "%s: %s" % (os.path.basename(path), e))
            return {'CANCELLED'}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        lines = core.table_lines(rep)
        summary = "%s: %s" % (os.path.basename(path), rep.get('message', ''))
        context.window_manager.tailbone_last_report = "\n".join([summary] + lines)
        self.report({'INFO'}, summary)
        return {'FINISHED'}


class TAILBONE_OT_import_fbx(bpy.types.Operator, ImportHelper):
    """Import an FBX character with Blender's importer, then repair its tail"""
    bl_idname = "import_scene.tailbone_fbx"
    bl_label = "Import FBX with Tail"
    bl_options = {'REGISTER', 'UNDO'}
    filename_ext = ".fbx"
    filter_glob: StringProperty(default="*.fbx", options={'HIDDEN'})
    tail: BoolProperty(name="Tail", default=True, description="Repair the tail (settings: Sidebar > Tailbone)")

    def draw(self, context):
        self.layout.prop(self, "tail")
        draw_settings(self.layout, context.scene.tailbone)

    def execute(self, context):
        before = set(bpy.data.objects)
        bpy.ops.import_scene.fbx(filepath=self.filepath)
        if not self.tail:
            return {'FINISHED'}
        new = [o for o in bpy.data.objects if o not in before]
        arms = [o for o in new if o.type == 'ARMATURE']
        if len(arms) != 1:
            self.report({'WARNING'}, "%s: imported, not repaired: %d armatures in the file" %
                        (os.path.basename(self.filepath), len(arms)))
            return {'FINISHED'}
        meshes = [o for o in new if o.type == 'MESH' and any(m.type == 'ARMATURE' and m.object == arms[0]
                                                              for m in o.modifiers)]
        if not meshes:
            self.report({'WARNING'}, "%s: imported, not repaired: no mesh is skinned to '%s'" %
                        (os.path.basename(self.filepath), arms[0].name))
            return {'FINISHED'}
        return run_repair(self, context, arms[0], meshes)


def draw_settings(layout, s):
    col = layout.column(align=True)
    col.prop(s, "mode")
    col.prop(s, "bake")
    sub = col.column(align=True)
    sub.enabled = s.bake
    sub.prop(s, "clips")
    sub.prop(s, "fps")


class TAILBONE_PT_main(bpy.types.Panel):
    bl_label = "Tailbone"
    bl_idname = "TAILBONE_PT_main"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Tailbone"

    def draw(self, context):
        layout = self.layout
        s = context.scene.tailbone
        ob = context.active_object
        layout.label(text=("Selected: %s" % ob.name) if ob else "Select a rigged character", icon='ARMATURE_DATA')
        layout.operator(TAILBONE_OT_repair_tail.bl_idname, icon='BONE_DATA')
        draw_settings(layout, s)


class TAILBONE_PT_blend(bpy.types.Panel):
    bl_label = "Weights"
    bl_parent_id = "TAILBONE_PT_main"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Tailbone"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        s = context.scene.tailbone
        col = self.layout.column(align=True)
        col.prop(s, "blend_auto")
        r = col.row(); r.enabled = not s.blend_auto; r.prop(s, "blend_zone")
        col.prop(s, "collar_auto")
        r = col.row(); r.enabled = not s.collar_auto; r.prop(s, "collar_band")
        col.prop(s, "smooth_pieces")


class TAILBONE_PT_spring(bpy.types.Panel):
    bl_label = "Spring"
    bl_parent_id = "TAILBONE_PT_main"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Tailbone"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        s = context.scene.tailbone
        col = self.layout.column(align=True)
        for p in ("root_hz", "tip_ratio", "damping", "gravity", "carry", "bend_limit", "rest_curve", "coupling", "ground"):
            col.prop(s, p)


class TAILBONE_PT_report(bpy.types.Panel):
    bl_label = "What was found"
    bl_parent_id = "TAILBONE_PT_main"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Tailbone"

    def draw(self, context):
        lines = _report_lines(context.window_manager)
        col = self.layout.column(align=True)
        if not lines:
            col.label(text="Run Repair Tail to see the detection table")
        for l in lines:
            col.label(text=l)


def menu_import(self, context):
    self.layout.operator(TAILBONE_OT_import_gltf.bl_idname, text="glTF 2.0 with Tail (.glb/.gltf)")
    self.layout.operator(TAILBONE_OT_import_fbx.bl_idname, text="FBX with Tail (.fbx)")


CLASSES = (TailbonePreferences, TailboneSettings, TAILBONE_OT_repair_tail, TAILBONE_OT_import_gltf,
           TAILBONE_OT_import_fbx, TAILBONE_PT_main, TAILBONE_PT_blend, TAILBONE_PT_spring, TAILBONE_PT_report)


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)
    bpy.types.Scene.tailbone = PointerProperty(type=TailboneSettings)
    bpy.types.WindowManager.tailbone_last_report = StringProperty(default="")
    bpy.types.TOPBAR_MT_file_import.append(menu_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    del bpy.types.WindowManager.tailbone_last_report
    del bpy.types.Scene.tailbone
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
