/* tailbone fix DIR_OR_FILE… -o OUTDIR [-j N] [--force] — batch mode.
 *
 * Each file is one ordinary single-file `tailbone fix IN -o OUT -q --report R`
 * run as a child process of this one (the same executable), N at a time: a
 * file that fails, crashes or runs out of memory costs only that file, and
 * the work stays the stateless file-in/file-out job any other runner (GNU
 * parallel, Slurm arrays, Kubernetes Jobs) can spread over machines instead
 * (docs/batch.md). Per file, one line of JSON on stdout (JSON Lines) as it
 * finishes; progress and a summary table on stderr. Exit status 0 when every
 * file succeeded (or was skipped as already done), 1 when any failed. */
#define _DEFAULT_SOURCE /* DT_DIR, strcasecmp */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

typedef enum { TB__PENDING, TB__RUNNING, TB__OK, TB__UNCHANGED, TB__SKIPPED, TB__FAILED } tb__state;

static const char *const tb__state_name[] = {"pending", "running", "ok", "unchanged", "skipped", "failed"};

typedef struct tb__job {
    char *in, *out;
    tb__state state;
    pid_t pid;
    int exit_code;
    double t0, seconds;
    char report[64], errlog[64]; /* temporary files of the child */
    char *error;                 /* first line the child printed on stderr */
    json_t *line;                /* the JSON line, once finished */
} tb__job;

typedef struct tb__batch {
    tb__job *jobs;
    int count, cap;
    const char *outdir;
    struct stat outdir_st;
    int outdir_exists;
} tb__batch;

static double tb__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int tb__is_model(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcasecmp(dot, ".glb") || !strcasecmp(dot, ".gltf") || !strcasecmp(dot, ".vrm"));
}

/* OUTDIR/rel with a .gltf written as .glb (the output is always GLB). */
static char *tb__out_path(const char *outdir, const char *rel)
{
    size_t n = strlen(outdir) + strlen(rel) + 8;
    char *p = malloc(n);
    if (!p)
        return NULL;
    snprintf(p, n, "%s/%s", outdir, rel);
    char *dot = strrchr(p, '.');
    if (dot && !strcasecmp(dot, ".gltf"))
        strcpy(dot, ".glb");
    return p;
}

static int tb__add(tb__batch *b, const char *in, const char *rel)
{
    if (b->count == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;
        tb__job *j = realloc(b->jobs, (size_t)cap * sizeof *j);
        if (!j)
            return -1;
        b->jobs = j;
        b->cap = cap;
    }
    tb__job *j = &b->jobs[b->count];
    memset(j, 0, sizeof *j);
    j->in = strdup(in);
    j->out = tb__out_path(b->outdir, rel);
    if (!j->in || !j->out) {
        free(j->in);
        free(j->out);
        return -1;
    }
    b->count++;
    return 0;
}

static int tb__cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .glb/.gltf/.vrm under dir (sorted, hidden entries and OUTDIR itself
 * skipped), with its path relative to the folder given. */
static int tb__walk(tb__batch *b, const char *dir, const char *rel, int depth)
{
    if (depth > 64) {
        fprintf(stderr, "tailbone: %s: folders nested deeper than 64 levels; not descending [arg]\n", dir);
        return -1;
    }
    struct stat st;
    if (b->outdir_exists && stat(dir, &st) == 0 && st.st_dev == b->outdir_st.st_dev && st.st_ino == b->outdir_st.st_ino)
        return 0; /* `fix chars -o chars/fixed`: never the outputs */
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "tailbone: %s: cannot read the folder: %s [io]\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, tb__cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t pl = strlen(dir) + strlen(names[i]) + 2, rl = strlen(rel) + strlen(names[i]) + 2;
        char *path = malloc(pl), *r = malloc(rl);
        if (path && r) {
            snprintf(path, pl, "%s/%s", dir, names[i]);
            snprintf(r, rl, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
            if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
                rc |= tb__walk(b, path, r, depth + 1);
            else if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && tb__is_model(names[i]))
                rc |= tb__add(b, path, r);
        }
        free(path);
        free(r);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int tb__mkdirs(const char *file)
{
    char *p = strdup(file);
    if (!p)
        return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    free(p);
    return 0;
}

/* The output is newer than its input: done by an earlier run. */
static int tb__up_to_date(const tb__job *j)
{
    struct stat si, so;
    if (stat(j->in, &si) != 0 || stat(j->out, &so) != 0 || !S_ISREG(so.st_mode))
        return 0;
    return so.st_mtim.tv_sec > si.st_mtim.tv_sec ||
           (so.st_mtim.tv_sec == si.st_mtim.tv_sec && so.st_mtim.tv_nsec > si.st_mtim.tv_nsec);
}

static int tb__temp(char *buf, size_t size, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, size, "%s/tailbone-%s-XXXXXX", dir && dir[0] ? dir : "/tmp", what);
    int fd = mkstemp(buf);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static pid_t tb__spawn(tb__job *j, char *const *pass, int pass_count, char *threads)
{
    if (tb__temp(j->report, sizeof j->report, "report") || tb__temp(j->errlog, sizeof j->errlog, "stderr"))
        return -1;
    if (tb__mkdirs(j->out) != 0)
        return -1;
    /* argv: tailbone fix IN -o OUT -q --report R [passed options] [global options] */
    int max = pass_count + 18, k = 0;
    char **av = calloc((size_t)max, sizeof *av);
    if (!av)
        return -1;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        free(av);
        return -1;
    }
    self[n] = 0;
    av[k++] = "tailbone";
    av[k++] = "fix";
    av[k++] = j->in;
    av[k++] = "-o";
    av[k++] = j->out;
    av[k++] = "-q";
    av[k++] = "--report";
    av[k++] = j->report;
    av[k++] = "-j"; /* each file's clips on its share of the cores */
    av[k++] = threads;
    for (int i = 0; i < pass_count; i++)
        av[k++] = pass[i];
    k += tb_cli_global_args((const char **)av + k);
    av[k] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(j->errlog, O_WRONLY | O_TRUNC | O_CLOEXEC);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd >= 0)
            dup2(fd, 2);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        signal(SIGINT, SIG_DFL);
        execv(self, av);
        _exit(127);
    }
    free(av);
    return pid;
}

static char *tb__first_line(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[1024];
    char *s = NULL;
    while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        if (buf[0]) {
            s = strdup(buf);
            break;
        }
    }
    fclose(f);
    return s;
}

static double tb__jnum(json_t *o, const char *k1, const char *k2)
{
    json_t *v = json_object_get(o, k1);
    if (k2)
        v = json_object_get(v, k2);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* worst (largest, or smallest when !max) of a value over an array */
static void tb__worst(json_t *arr, const char *k1, const char *k2, int max, json_t *to, const char *name)
{
    double w = NAN;
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        double v = tb__jnum(o, k1, k2);
        if (!isnan(v) && (isnan(w) || (max ? v > w : v < w)))
            w = v;
    }
    if (!isnan(w))
        json_object_set_new(to, name, json_real(w));
}

/* The JSON line of a finished file: status, the tail found, figures, time. */
static json_t *tb__line(const tb__job *j)
{
    json_t *l = json_pack("{s:s,s:s,s:s}", "file", j->in, "output", j->out, "status", tb__state_name[j->state]);
    if (j->state == TB__SKIPPED) {
        json_object_set_new(l, "reason", json_string("output newer than the input (--force to redo)"));
        return l;
    }
    json_object_set_new(l, "exit", json_integer(j->exit_code));
    json_object_set_new(l, "time_s", json_real(round(j->seconds * 1000) / 1000));
    if (j->error)
        json_object_set_new(l, "error", json_string(j->error));
    if (j->state != TB__OK && j->state != TB__UNCHANGED)
        return l;
    json_t *rep = json_load_file(j->report, 0, NULL);
    if (!rep)
        return l;
    int tails = 0, repaired = 0;
    size_t i;
    json_t *a;
    json_t *apps = json_object_get(rep, "appendages"), *kinds = json_array();
    json_array_foreach(apps, i, a) {
        const char *kind = json_string_value(json_object_get(a, "kind"));
        const char *dec = json_string_value(json_object_get(a, "decision"));
        if (kind && !strcmp(kind, "tail")) {
            tails++;
            repaired += dec && strcmp(dec, "untouched") != 0;
        }
        if (kind)
            json_array_append_new(kinds, json_string(kind));
    }
    json_object_set_new(l, "tail", json_boolean(tails > 0));
    json_object_set_new(l, "tails_repaired", json_integer(repaired));
    json_object_set_new(l, "appendages", kinds);
    json_t *pelvis = json_object_get(rep, "pelvis");
    if (json_is_string(pelvis))
        json_object_set(l, "pelvis", pelvis);
    json_t *bake = json_object_get(rep, "bake");
    json_t *fig = json_object();
    if (bake) {
        json_object_set(fig, "chains", json_object_get(bake, "chains"));
        json_object_set(fig, "bones", json_object_get(bake, "bones"));
        json_t *clips = json_object_get(bake, "clips");
        int baked = 0;
        json_array_foreach(clips, i, a)
            baked += json_is_true(json_object_get(a, "baked"));
        json_object_set_new(fig, "clips_baked", json_integer(baked));
        tb__worst(clips, "loop_closure_deg", NULL, 1, fig, "worst_closure_deg");
        tb__worst(clips, "swing_deg", NULL, 0, fig, "least_swing_deg");
    }
    json_t *rows = json_object_get(rep, "stretch");
    tb__worst(rows, "tail", "p99", 1, fig, "tail_p99");
    tb__worst(rows, "body", "p99", 1, fig, "body_p99");
    tb__worst(rows, "tail", "torn", 1, fig, "tail_torn");
    tb__worst(rows, "seam", "torn", 1, fig, "seam_torn");
    json_object_set_new(l, "figures", fig);
    json_decref(rep);
    return l;
}

static void tb__finish(tb__job *j, int status, double now)
{
    j->seconds = now - j->t0;
    if (WIFEXITED(status)) {
        j->exit_code = WEXITSTATUS(status);
    } else {
        j->exit_code = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    j->error = tb__first_line(j->errlog);
    if (!j->error && WIFSIGNALED(status)) {
        char buf[96];
        snprintf(buf, sizeof buf, "tailbone fix was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
        j->error = strdup(buf);
    } else if (!j->error && j->exit_code == 127) {
        j->error = strdup("tailbone fix could not be started");
    }
    j->state = j->exit_code == 0 ? TB__OK : TB__FAILED;
    if (j->state == TB__OK) {
        json_t *rep = json_load_file(j->report, 0, NULL);
        if (rep && json_is_false(json_object_get(rep, "changed")))
            j->state = TB__UNCHANGED;
        json_decref(rep);
    }
    j->line = tb__line(j);
    unlink(j->report);
    unlink(j->errlog);
}

static void tb__emit(tb__job *j, int done, int total, int quiet)
{
    char *s = json_dumps(j->line, JSON_COMPACT | JSON_REAL_PRECISION(6));
    if (s) {
        puts(s);
        fflush(stdout);
        free(s);
    }
    if (!quiet) {
        if (j->state == TB__SKIPPED)
            fprintf(stderr, "[%d/%d] skipped   %s (up to date)\n", done, total, j->in);
        else
            fprintf(stderr, "[%d/%d] %-9s %s (%.1f s)%s%s\n", done, total, tb__state_name[j->state], j->in, j->seconds,
                    j->error ? ": " : "", j->error ? j->error : "");
    }
}

static void tb__summary(const tb__batch *b, double seconds)
{
    int n[6] = {0};
    for (int i = 0; i < b->count; i++)
        n[b->jobs[i].state]++;
    fprintf(stderr, "\n%-40s %-9s %5s %6s %8s %8s %6s %8s\n", "file", "status", "tail", "clips", "tail p99",
            "body p99", "torn", "time");
    for (int i = 0; i < b->count; i++) {
        const tb__job *j = &b->jobs[i];
        const char *name = j->in;
        size_t len = strlen(name);
        if (len > 40)
            name += len - 40;
        json_t *fig = json_object_get(j->line, "figures");
        json_t *tail = json_object_get(j->line, "tail");
        char clips[16] = "-", p99[16] = "-", body[16] = "-", torn[16] = "-", t[16] = "-";
        if (fig) {
            snprintf(clips, sizeof clips, "%d", (int)tb__jnum(fig, "clips_baked", NULL));
            double v = tb__jnum(fig, "tail_p99", NULL);
            if (!isnan(v))
                snprintf(p99, sizeof p99, "%.2f", v);
            v = tb__jnum(fig, "body_p99", NULL);
            if (!isnan(v))
                snprintf(body, sizeof body, "%.2f", v);
            v = tb__jnum(fig, "tail_torn", NULL);
            if (!isnan(v))
                snprintf(torn, sizeof torn, "%.1f%%", 100 * v);
        }
        if (j->state != TB__SKIPPED)
            snprintf(t, sizeof t, "%.1f s", j->seconds);
        fprintf(stderr, "%-40s %-9s %5s %6s %8s %8s %6s %8s\n", name, tb__state_name[j->state],
                tail ? (json_is_true(tail) ? "yes" : "no") : "-", clips, p99, body, torn, t);
    }
    fprintf(stderr, "%d file(s): %d repaired, %d unchanged, %d skipped (up to date), %d failed; %.1f s\n", b->count,
            n[TB__OK], n[TB__UNCHANGED], n[TB__SKIPPED], n[TB__FAILED], seconds);
}

static int tb__cmp_job_out(const void *a, const void *b)
{
    return strcmp(((const tb__job *)a)->out, ((const tb__job *)b)->out);
}

/* The inputs: each file named, each model file under each folder named. */
static int tb__batch_inputs(tb__batch *b, int argc, char **argv, const unsigned char *mark)
{
    int rc = TB_EXIT_OK;
    struct stat st;
    for (int i = 1; i < argc; i++) {
        if (mark[i] != TB_CLI_ARG_INPUT)
            continue;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "tailbone: %s: %s [missing-file]\n", argv[i], strerror(errno));
            rc = TB_EXIT_FAIL;
        } else if (S_ISDIR(st.st_mode)) {
            if (tb__walk(b, argv[i], "", 0) != 0)
                rc = TB_EXIT_FAIL;
        } else {
            const char *base = strrchr(argv[i], '/');
            if (tb__add(b, argv[i], base ? base + 1 : argv[i]) != 0)
                rc = TB_EXIT_FAIL;
        }
    }
    return rc;
}

/* Two inputs must not write the same output: sorted by output, each clash
 * named (TB_EXIT_USAGE), else rc as it was. */
static int tb__batch_clashes(tb__batch *b, int rc)
{
    qsort(b->jobs, (size_t)b->count, sizeof *b->jobs, tb__cmp_job_out);
    for (int i = 1; i < b->count; i++)
        if (!strcmp(b->jobs[i].out, b->jobs[i - 1].out)) {
            fprintf(stderr, "tailbone: %s and %s would both be written to %s; rename one or run them apart [arg]\n",
                    b->jobs[i - 1].in, b->jobs[i].in, b->jobs[i].out);
            rc = TB_EXIT_USAGE;
        }
    return rc;
}

/* Starts job j (or settles it at once: up to date, or its fix could not be
 * started); 1 when it runs. */
static int tb__batch_start(tb__batch *b, tb__job *j, char **pass, int pass_count, char *threads, int force,
                           int quiet, int *done)
{
    if (!force && tb__up_to_date(j)) {
        j->state = TB__SKIPPED;
        j->line = tb__line(j);
        tb__emit(j, ++*done, b->count, quiet);
        return 0;
    }
    j->t0 = tb__now();
    j->pid = tb__spawn(j, pass, pass_count, threads);
    if (j->pid < 0) {
        char buf[256];
        snprintf(buf, sizeof buf, "tailbone: %s: cannot start its fix: %s [io]", j->in, strerror(errno));
        j->error = strdup(buf);
        j->state = TB__FAILED;
        j->exit_code = TB_EXIT_FAIL;
        j->line = tb__line(j);
        unlink(j->report);
        unlink(j->errlog);
        tb__emit(j, ++*done, b->count, quiet);
        return 0;
    }
    j->state = TB__RUNNING;
    return 1;
}

/* Every job, jobs at once, each fix given pass and threads per file (the
 * cores shared among the files at once); a line as each ends. */
static void tb__batch_run(tb__batch *b, char **pass, int pass_count, int jobs, int force, int quiet)
{
    char threads[24];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(threads, sizeof threads, "%ld", cores > jobs ? cores / jobs : 1);
    int next = 0, running = 0, done = 0;
    while (done < b->count) {
        while (running < jobs && next < b->count)
            running += tb__batch_start(b, &b->jobs[next++], pass, pass_count, threads, force, quiet, &done);
        if (!running)
            continue;
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break; /* no child left: cannot happen while running > 0 */
        }
        for (int i = 0; i < b->count; i++)
            if (b->jobs[i].state == TB__RUNNING && b->jobs[i].pid == pid) {
                tb__finish(&b->jobs[i], status, tb__now());
                running--;
                tb__emit(&b->jobs[i], ++done, b->count, quiet);
            }
    }
}

int tb_cli_fix_batch(int argc, char **argv, const unsigned char *mark, const char *outdir, int jobs, int force,
                     int quiet)
{
    tb__batch b;
    memset(&b, 0, sizeof b);
    b.outdir = outdir;
    struct stat st;
    if (stat(outdir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "tailbone: %s: with several inputs or a folder, -o names a folder; this is a file [arg]\n",
                    outdir);
            return TB_EXIT_USAGE;
        }
        b.outdir_st = st;
        b.outdir_exists = 1;
    }
    int rc = tb__batch_inputs(&b, argc, argv, mark);
    if (b.count == 0) {
        fprintf(stderr, "tailbone: no .glb, .gltf or .vrm file among the inputs [arg]\n");
        free(b.jobs);
        return TB_EXIT_FAIL;
    }
    rc = tb__batch_clashes(&b, rc);
    if (rc == TB_EXIT_USAGE)
        goto done;
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "tailbone: %s: cannot create the output folder: %s [io]\n", outdir, strerror(errno));
        rc = TB_EXIT_FAIL;
        goto done;
    }
    /* the options every file's fix gets */
    char **pass = calloc((size_t)argc + 1, sizeof *pass);
    int pass_count = 0;
    if (!pass) {
        rc = TB_EXIT_FAIL;
        goto done;
    }
    for (int i = 1; i < argc; i++)
        if (mark[i] == TB_CLI_ARG_PASS)
            pass[pass_count++] = argv[i];
    if (jobs <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n > 0 ? (int)n : 1;
    }
    double t0 = tb__now();
    tb__batch_run(&b, pass, pass_count, jobs, force, quiet);
    free(pass);
    if (!quiet)
        tb__summary(&b, tb__now() - t0);
    for (int i = 0; i < b.count; i++)
        if (b.jobs[i].state == TB__FAILED || b.jobs[i].state == TB__PENDING)
            rc = TB_EXIT_FAIL;
done:
    for (int i = 0; i < b.count; i++) {
        free(b.jobs[i].in);
        free(b.jobs[i].out);
        free(b.jobs[i].error);
        json_decref(b.jobs[i].line);
    }
    free(b.jobs);
    return rc;
}
