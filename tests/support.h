/* Shared helpers for the cmocka tests. */
#ifndef TB_TEST_SUPPORT_H
#define TB_TEST_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* A path the caller owns: tbt_shared_dir and tbt_corpus_file write into it,
 * so two lookups never share a buffer. */
typedef struct {
    char s[4096];
} tbt_path;
/* ../shared next to the source tree, written into *out and returned, or NULL
 * when absent (tests then skip). With TB_REQUIRE_CORPUS=1 an absent folder or
 * file fails the running test. */
const char *tbt_shared_dir(tbt_path *out);
/* Path of a file under ../shared/corpus, written into *out and returned
 * (out->s), or NULL when it is absent (the miss is logged, see below). */
const char *tbt_corpus_file(tbt_path *out, const char *rel);
/* Skips the running test because a corpus file is absent: with
 * TB_REQUIRE_CORPUS=1 (CI) the lookup already failed the test, naming the
 * file; otherwise the skip is printed and appended to $TB_SKIP_LOG (beside
 * the "PROGRAM: missing FILE" line of each absent file), which `make test`
 * counts (a cmocka skip alone reads as Passed in CTest). */
void tbt_skip_note(const char *test);
#define tbt_skip() do { tbt_skip_note(__func__); skip(); } while (0)
/* A fresh scratch directory for this test program (created on first use). */
const char *tbt_tmp_dir(void);
/* tmp_dir()/name, in a static buffer rotated over 8 slots. */
const char *tbt_tmp_path(const char *name);
/* Runs the CLI with the given argument string through /bin/sh; captures
 * stdout+stderr into *out (malloc'd, may be NULL). Returns the exit code. */
int tbt_run_cli(char **out, const char *fmt, ...);
/* Reads a whole file; NULL if absent. */
uint8_t *tbt_read_file(const char *path, size_t *size);
int tbt_write_file(const char *path, const void *data, size_t size);
int tbt_file_exists(const char *path);

#endif
