/* FBX in and out of `tailbone fix`, through Blender in background mode
 * (docs/blender.md, "FBX": chosen over assimp by a measured round trip).
 * The converter script (blender/fbx_convert.py) is compiled into the CLI. */
#ifndef TB_CLI_FBX_H
#define TB_CLI_FBX_H

typedef struct tb_cli_fbx {
    char dir[4096];     /* temporary folder, "" when no FBX is involved */
    char in_glb[4200];  /* IN converted to GLB */
    char out_glb[4200]; /* the GLB to convert into OUT */
} tb_cli_fbx;

/* 1 if path ends in .fbx (any case). */
int tb_cli_is_fbx(const char *path);
/* When IN or OUT is .fbx: makes a temporary folder and converts IN there;
 * *load_path / *save_path are what to load and save instead (else IN and
 * OUT). f must be zeroed first. Prints one line and returns TB_EXIT_FAIL
 * when Blender is missing or the conversion fails. */
int tb_cli_fbx_open(tb_cli_fbx *f, const char *in, const char *out, const char **load_path, const char **save_path);
/* After *save_path was written: converts it into OUT (an .fbx) through a
 * temporary file beside OUT renamed over it. Nothing to do for a GLB OUT. */
int tb_cli_fbx_finish(tb_cli_fbx *f, const char *out);
/* Removes the temporary folder. */
void tb_cli_fbx_close(tb_cli_fbx *f);

#endif
