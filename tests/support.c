/* program_invocation_short_name names the test program in the skip log */
#define _GNU_SOURCE
#include "support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int tbt_corpus_required(void)
{
    const char *req = getenv("TB_REQUIRE_CORPUS");
    return req && strcmp(req, "1") == 0;
}

/* One line in $TB_SKIP_LOG (counted and listed by scripts/skips.sh). */
static void tbt_log_skip(const char *fmt, const char *a, const char *b)
{
    const char *log = getenv("TB_SKIP_LOG");
    if (!log || !*log)
        return;
    FILE *f = fopen(log, "a");
    if (f) {
        fprintf(f, fmt, a, b);
        fclose(f);
    }
}

/* Every absent corpus file is logged, whether the test then skips itself,
 * leaves out one body of several or goes on without it: a program name and
 * the path, once per lookup (skips.sh lists them without repeats). */
static void tbt_missing_file(const char *path)
{
    if (tbt_corpus_required())
        fail_msg("TB_REQUIRE_CORPUS=1 but corpus file %s is missing", path);
    tbt_log_skip("%s: missing %s\n", program_invocation_short_name, path);
}

/* cmocka runs each test with the filter given in TBT_FILTER (a glob), so one
 * test of a program can be run alone (scripts/mutants.py does). */
__attribute__((constructor)) static void tbt_init(void)
{
    const char *filter = getenv("TBT_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
}

const char *tbt_shared_dir(tbt_path *out)
{
    const char *env = getenv("TB_SHARED_DIR");
    snprintf(out->s, sizeof out->s, "%s", env ? env : TB_SOURCE_DIR "/../shared");
    struct stat st;
    char probe[sizeof out->s + 16];
    snprintf(probe, sizeof probe, "%s/corpus", out->s);
    if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode)) {
        tbt_missing_file(probe);
        return NULL;
    }
    return out->s;
}

const char *tbt_corpus_file(tbt_path *out, const char *rel)
{
    tbt_path shared;
    if (!tbt_shared_dir(&shared))
        return NULL;
    int n = snprintf(out->s, sizeof out->s, "%s/corpus/%s", shared.s, rel);
    if (n < 0 || (size_t)n >= sizeof out->s)
        fail_msg("corpus path too long: %s/corpus/%s", shared.s, rel);
    if (tbt_file_exists(out->s))
        return out->s;
    tbt_missing_file(out->s);
    return NULL;
}

void tbt_skip_note(const char *test)
{
    /* the absent file was logged (and, with TB_REQUIRE_CORPUS=1, failed the
     * test) by the lookup that found it missing: see tbt_missing_file */
    const char *what = "a corpus file (logged as missing by this program)";
    if (tbt_corpus_required())
        fail_msg("%s: skipped while TB_REQUIRE_CORPUS=1 (missing: %s)", test, what);
    fprintf(stderr, "SKIP %s: missing %s\n", test, what);
    char who[512];
    snprintf(who, sizeof who, "%s/%s", program_invocation_short_name, test);
    tbt_log_skip("%s: test skipped, missing %s\n", who, what);
}

const char *tbt_tmp_dir(void)
{
    static char buf[4096];
    if (buf[0])
        return buf;
    const char *env = getenv("TB_TMP");
    char base[4000];
    snprintf(base, sizeof base, "%s", env ? env : "/tmp");
    mkdir(base, 0777);
    snprintf(buf, sizeof buf, "%s/tbt-%ld", base, (long)getpid());
    mkdir(buf, 0777);
    return buf;
}

const char *tbt_tmp_path(const char *name)
{
    static char slots[8][8192];
    static int next;
    char *buf = slots[next++ & 7];
    snprintf(buf, 8192, "%s/%s", tbt_tmp_dir(), name);
    return buf;
}

int tbt_run_cli(char **out, const char *fmt, ...)
{
    char args[8192], cmd[9000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", TB_CLI_PATH, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[len] = 0;
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    return (st >= 0 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
}

uint8_t *tbt_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    if (size)
        *size = (size_t)n;
    return buf;
}

int tbt_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, size, f);
    fclose(f);
    return w == size ? 0 : -1;
}

int tbt_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}
