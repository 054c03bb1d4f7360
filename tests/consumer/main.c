/* A user's program against an installed libtailbone: builds a synthetic
 * character with a mis-rigged tail, runs the whole fix job on it, writes the
 * result to memory and reads it back. Exit 0 and one line when it all works. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tailbone/tailbone.h>

int main(void)
{
    tb_doc *in = NULL, *out = NULL, *back = NULL;
    tb_error err;
    memset(&err, 0, sizeof err);
    if (tb_synth_build(&in, "tail_leg", NULL, NULL, &err) != TB_OK) {
        fprintf(stderr, "consumer: synth: %s\n", err.message);
        return 1;
    }
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    tb_fix_report rep;
    memset(&rep, 0, sizeof rep);
    if (tb_fix_run(&out, in, &d, &rep, &err) != TB_OK) {
        fprintf(stderr, "consumer: fix: %s: %s\n", err.where, err.message);
        return 1;
    }
    /* the report as JSON text: no jansson in the public headers */
    char *text = tb_fix_report_json_text(&rep, 2);
    if (!text || !strstr(text, "\"appendages\"")) {
        fprintf(stderr, "consumer: the fix report's JSON text lacks its appendages\n");
        return 1;
    }
    free(text);
    uint8_t *glb = NULL;
    size_t size = 0;
    if (tb_doc_write_memory(out, &glb, &size, &err) != TB_OK ||
        tb_doc_load_memory(&back, glb, size, "fixed.glb", NULL, NULL, &err) != TB_OK) {
        fprintf(stderr, "consumer: write/read: %s\n", err.message);
        return 1;
    }
    /* the repaired file has the new Tail_1 bone */
    const tb_gltf *g = tb_doc_gltf(back);
    int tail = 0;
    for (int i = 0; i < g->node_count; i++)
        tail |= g->nodes[i].name && !strcmp(g->nodes[i].name, "Tail_1");
    printf("consumer: changed %d, chains %d, bones %d, clips baked %d, Tail_1 %s, %zu bytes\n", rep.changed,
           rep.bake.chain_count, rep.bake.bone_count, rep.stretch_count, tail ? "present" : "absent", size);
    int ok = rep.changed && rep.bake.chain_count == 1 && tail;
    free(glb);
    tb_fix_report_free(&rep);
    tb_doc_free(back);
    tb_doc_free(out);
    tb_doc_free(in);
    return ok ? 0 : 1;
}
