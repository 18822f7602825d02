/* The `kiln` command line, run as a separate process: usage errors and help, `kiln inspect`
 * (text and --json) on files written here with the Cast writer and on blobs baked from them
 * and from the bundled samples (the animation clips), and, when the shared corpus is present,
 * node counts against MANIFEST.md and exit codes for every malformed file. Also the JSON
 * writer that --json relies on, called directly. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "kiln/bake/cast_write.h"
#include "kiln/bake/source.h"
#include "kiln/version.h"
#include "test_util.h"

extern char **environ;

/* Per run of the binary; large_500k.cast takes well under a second. */
#define KILN_CLI_TIMEOUT_S 60

static void remove_tmp_dir(void);

/* ---- running the binary ---------------------------------------------------------------------- */

/* The kiln executable: the build's KILN_CLI_PATH, else $KILN_CLI, else <build dir>/kiln. */
static const char *kiln_path(void)
{
#if defined(KILN_CLI_PATH)
    return KILN_CLI_PATH;
#else
    const char *env = getenv("KILN_CLI");
    if (env && env[0]) return env;
#if defined(KILN_BUILD_DIR)
    return KILN_BUILD_DIR "/kiln";
#else
    return "./kiln";
#endif
#endif
}

typedef struct run_result {
    int    status;   /* exit status, or 128 + signal */
    char  *out;      /* stdout, NUL-terminated */
    size_t out_len;
    char  *err;      /* stderr, NUL-terminated */
} run_result;

static char *slurp_fd(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        if (cap - n < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r <= 0) break;
        n += (size_t)r;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

static int temp_fd(void)
{
    char name[] = "/tmp/kiln_cli_test_XXXXXX";
    int fd = mkstemp(name);
    cr_assert(fd >= 0, "mkstemp failed");
    unlink(name);
    return fd;
}

/* Runs kiln with args (NULL-terminated, without argv[0]). stdout goes to `stdout_path` when
 * given (e.g. /dev/full), else it is captured. */
static run_result run_kiln_to(const char *const *args, const char *stdout_path)
{
    const char *exe = kiln_path();
    if (access(exe, X_OK) != 0) {
        remove_tmp_dir(); /* a skipped test does not run its .fini */
        cr_skip_test("kiln binary not found at %s (set KILN_CLI): skipping", exe);
    }
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)exe;
    for (; args[argc - 1] && argc < 31; argc++) argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;

    int out_fd = stdout_path ? open(stdout_path, O_WRONLY) : temp_fd();
    int err_fd = temp_fd();
    cr_assert(out_fd >= 0 && err_fd >= 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "posix_spawn(%s) failed: %s", exe, strerror(rc));
    /* A hung kiln must fail this test, not stall the suite until ctest's timeout. */
    int ws = 0;
    struct timespec start, now, nap = {0, 5 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pid_t done = waitpid(pid, &ws, WNOHANG);
        if (done == pid) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > KILN_CLI_TIMEOUT_S) {
            kill(pid, SIGKILL);
            waitpid(pid, &ws, 0);
            cr_expect_fail("kiln %s %s: no exit after %d s, killed", args[0] ? args[0] : "",
                           args[0] && args[1] ? args[1] : "", KILN_CLI_TIMEOUT_S);
            break;
        }
        nanosleep(&nap, NULL);
    }

    run_result r;
    memset(&r, 0, sizeof r);
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    r.out = stdout_path ? calloc(1, 1) : slurp_fd(out_fd, &r.out_len);
    r.err = slurp_fd(err_fd, NULL);
    close(out_fd);
    close(err_fd);
    return r;
}

static run_result run_kiln(const char *const *args) { return run_kiln_to(args, NULL); }

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

/* ---- a minimal JSON reader (enough to check the documents kiln writes) ------------------------ */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv {
    int         type;
    double      num;      /* J_NUM, J_BOOL */
    char       *str;      /* J_STR (UTF-8, NUL-terminated) */
    struct jv  *items;    /* J_ARR, J_OBJ */
    char      **keys;     /* J_OBJ */
    size_t      count;
} jv;

typedef struct jparse {
    const char *p, *end;
    int         ok;
} jparse;

static void jws(jparse *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')) j->p++;
}

static void jput_utf8(char **buf, size_t *n, unsigned cp)
{
    char *b = *buf;
    if (cp < 0x80) b[(*n)++] = (char)cp;
    else if (cp < 0x800) {
        b[(*n)++] = (char)(0xC0 | (cp >> 6));
        b[(*n)++] = (char)(0x80 | (cp & 63));
    } else {
        b[(*n)++] = (char)(0xE0 | (cp >> 12));
        b[(*n)++] = (char)(0x80 | ((cp >> 6) & 63));
        b[(*n)++] = (char)(0x80 | (cp & 63));
    }
}

static char *jstring(jparse *j)
{
    if (j->p >= j->end || *j->p != '"') { j->ok = 0; return NULL; }
    j->p++;
    char *buf = malloc((size_t)(j->end - j->p) * 3 + 1);
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p++;
        if (c < 0x20) { j->ok = 0; break; }   /* raw control characters are invalid JSON */
        if (c != '\\') { buf[n++] = (char)c; continue; }
        if (j->p >= j->end) { j->ok = 0; break; }
        char e = *j->p++;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                if (j->p >= j->end) { j->ok = 0; break; }
                char h = *j->p++;
                cp = cp * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                          : h >= 'A' && h <= 'F' ? h - 'A' + 10 : (j->ok = 0));
            }
            jput_utf8(&buf, &n, cp);
            break;
        }
        default: j->ok = 0;
        }
    }
    if (j->p >= j->end) j->ok = 0;
    else j->p++;
    buf[n] = 0;
    return buf;
}

static void jvalue(jparse *j, jv *v, int depth)
{
    memset(v, 0, sizeof *v);
    jws(j);
    if (!j->ok || j->p >= j->end || depth > 64) { j->ok = 0; return; }
    char c = *j->p;
    if (c == '{' || c == '[') {
        int obj = c == '{';
        v->type = obj ? J_OBJ : J_ARR;
        j->p++;
        size_t cap = 0;
        jws(j);
        if (j->p < j->end && *j->p == (obj ? '}' : ']')) { j->p++; return; }
        for (;;) {
            if (v->count == cap) {
                cap = cap ? cap * 2 : 8;
                v->items = realloc(v->items, cap * sizeof *v->items);
                if (obj) v->keys = realloc(v->keys, cap * sizeof *v->keys);
            }
            if (obj) {
                jws(j);
                v->keys[v->count] = jstring(j);
                jws(j);
                if (j->p >= j->end || *j->p != ':') { j->ok = 0; return; }
                j->p++;
            }
            jvalue(j, &v->items[v->count++], depth + 1);
            if (!j->ok) return;
            jws(j);
            if (j->p < j->end && *j->p == ',') { j->p++; continue; }
            if (j->p < j->end && *j->p == (obj ? '}' : ']')) { j->p++; return; }
            j->ok = 0;
            return;
        }
    }
    if (c == '"') {
        v->type = J_STR;
        v->str = jstring(j);
        return;
    }
    if (strncmp(j->p, "null", 4) == 0) { v->type = J_NULL; j->p += 4; return; }
    if (strncmp(j->p, "true", 4) == 0) { v->type = J_BOOL; v->num = 1; j->p += 4; return; }
    if (strncmp(j->p, "false", 5) == 0) { v->type = J_BOOL; j->p += 5; return; }
    char *stop;
    v->type = J_NUM;
    v->num = strtod(j->p, &stop);
    if (stop == j->p) j->ok = 0;
    j->p = stop;
}

/* Parses a whole document; fails the test when it is not exactly one valid JSON value. */
static jv json_parse(const char *text)
{
    jparse j = {text, text + strlen(text), 1};
    jv v;
    jvalue(&j, &v, 0);
    jws(&j);
    cr_assert(j.ok && j.p == j.end, "invalid JSON at byte %ld of:\n%s", (long)(j.p - text), text);
    return v;
}

static void json_free(jv *v)
{
    for (size_t i = 0; i < v->count; i++) {
        json_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

static const jv *jget(const jv *o, const char *key)
{
    if (!o || o->type != J_OBJ) return NULL;
    for (size_t i = 0; i < o->count; i++)
        if (strcmp(o->keys[i], key) == 0) return &o->items[i];
    return NULL;
}

static const jv *jat(const jv *a, size_t i)
{
    return a && a->type == J_ARR && i < a->count ? &a->items[i] : NULL;
}

static double jnum(const jv *v, const char *what)
{
    cr_assert(v && v->type == J_NUM, "%s: expected a number", what);
    return v->num;
}

static const char *jstr(const jv *v, const char *what)
{
    cr_assert(v && v->type == J_STR, "%s: expected a string", what);
    return v->str;
}

/* ---- building inputs with the writer ----------------------------------------------------------- */

static char tmp_dir[64]; /* empty when the test made none */

static void make_tmp_dir(void)
{
    strcpy(tmp_dir, "/tmp/kiln_cli_XXXXXX");
    cr_assert_not_null(mkdtemp(tmp_dir));
}

static void remove_tmp_dir(void)
{
    DIR *d = tmp_dir[0] ? opendir(tmp_dir) : NULL;
    if (!d) return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(tmp_dir);
    tmp_dir[0] = 0;
}

static void save(kiln_cast_writer *w, const char *name, char *path, size_t cap)
{
    kiln_diag err;
    snprintf(path, cap, "%s/%s", tmp_dir, name);
    cr_assert_eq(kiln_cast_writer_save(w, path, &err), KILN_OK, "save %s: %s", path, err.message);
    kiln_cast_writer_destroy(w);
}

/* `kiln inspect path` (`json`: with --json), expected to exit 0. */
static run_result inspect_ok(const char *path, int json)
{
    const char *text_args[] = {"inspect", path, NULL};
    const char *json_args[] = {"inspect", "--json", path, NULL};
    run_result r = run_kiln(json ? json_args : text_args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    return r;
}

/* A quad mesh 'body' under `model` with `faces` (6 indices) and material hash `material` (0:
 * none). */
static void add_quad_mesh(kiln_cast_writer *w, uint32_t model, uint64_t hash, const uint32_t *faces,
                          uint64_t material)
{
    static const float vp[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    static const float vn[12] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    static const float uv[8] = {0, 0, 1, 0, 1, 1, 0, 1};
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, hash);
    kiln_cast_writer_string(w, mesh, "n", "body");
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 4);
    kiln_cast_writer_floats(w, mesh, "vn", KILN_CAST_TYPE_VEC3, vn, 4);
    uint32_t one = 1;
    kiln_cast_writer_ints(w, mesh, "ul", &one, 1);
    kiln_cast_writer_floats(w, mesh, "u0", KILN_CAST_TYPE_VEC2, uv, 4);
    kiln_cast_writer_ints(w, mesh, "f", faces, 6);
    if (material) kiln_cast_writer_u64(w, mesh, "m", material);
}

/* The scene whose counts the --json test checks (hand-computed below):
 *   Root > Model 'hero' (p = 1,2,3) > Skeleton > Bone root, child (p 0), leaf (p 1)
 *                                   > Mesh 'body' (4 vertices, 2 faces, normals, 1 UV layer, m -> skin)
 *                                   > Material 'skin' (pbr) > File 'skin.png' (albedo)
 *        > Animation 'walk' (30 fps, looping) > Curve child.tx (kb 5,10,20, absolute)
 *                                            > Curve leaf.rq (kb 0,10, relative)
 *                                            > NotificationTrack 'step' (kb 3,25)
 *        > Instance > File 'a.cast'  (x2)
 *        > Instance > File 'b.cast'
 *        > Metadata (a 'tester', up 'y')
 * Nodes: Root 1, Model 1, Skeleton 1, Bone 3, Mesh 1, Material 1, File 4, Animation 1,
 * Curve 2, NotificationTrack 1, Instance 3, Metadata 1. Frame range [0, 25]. */
static void write_scene(char *path, size_t cap)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    cr_assert_not_null(w);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "hero");
    static const float p[3] = {1, 2, 3};
    kiln_cast_writer_floats(w, model, "p", KILN_CAST_TYPE_VEC3, p, 1);

    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    static const char *const bones[3] = {"root", "child", "leaf"};
    for (uint32_t b = 0; b < 3; b++) {
        uint32_t bone = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 4 + b);
        kiln_cast_writer_string(w, bone, "n", bones[b]);
        if (b > 0) {
            uint32_t parent = b - 1;
            kiln_cast_writer_prop(w, bone, "p", KILN_CAST_TYPE_INT, &parent, 1);
        }
    }
    static const uint32_t faces[6] = {0, 1, 2, 0, 2, 3};
    add_quad_mesh(w, model, 7, faces, 8);
    uint32_t mat = kiln_cast_writer_node(w, model, KILN_CAST_ID_MATERIAL, 8);
    kiln_cast_writer_string(w, mat, "n", "skin");
    kiln_cast_writer_string(w, mat, "t", "pbr");
    kiln_cast_writer_u64(w, mat, "albedo", 9);
    uint32_t tex = kiln_cast_writer_node(w, mat, KILN_CAST_ID_FILE, 9);
    kiln_cast_writer_string(w, tex, "p", "skin.png");

    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 10);
    kiln_cast_writer_string(w, anim, "n", "walk");
    static const float fr = 30;
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    kiln_cast_writer_byte(w, anim, "lo", 1);
    uint32_t c1 = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 11);
    kiln_cast_writer_string(w, c1, "nn", "child");
    kiln_cast_writer_string(w, c1, "kp", "tx");
    static const uint32_t kb1[3] = {5, 10, 20};
    static const float kv1[3] = {0, 1, 2};
    kiln_cast_writer_ints(w, c1, "kb", kb1, 3);
    kiln_cast_writer_floats(w, c1, "kv", KILN_CAST_TYPE_FLOAT, kv1, 3);
    kiln_cast_writer_string(w, c1, "m", "absolute");
    uint32_t c2 = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 12);
    kiln_cast_writer_string(w, c2, "nn", "leaf");
    kiln_cast_writer_string(w, c2, "kp", "rq");
    static const uint32_t kb2[2] = {0, 10};
    static const float kv2[8] = {0, 0, 0, 1, 0, 0, 0, 1};
    kiln_cast_writer_ints(w, c2, "kb", kb2, 2);
    kiln_cast_writer_floats(w, c2, "kv", KILN_CAST_TYPE_VEC4, kv2, 2);
    kiln_cast_writer_string(w, c2, "m", "relative");
    uint32_t nt = kiln_cast_writer_node(w, anim, KILN_CAST_ID_NOTIFICATION_TRACK, 13);
    kiln_cast_writer_string(w, nt, "n", "step");
    static const uint32_t kb3[2] = {3, 25};
    kiln_cast_writer_ints(w, nt, "kb", kb3, 2);

    static const char *const refs[3] = {"a.cast", "a.cast", "b.cast"};
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t inst = kiln_cast_writer_node(w, root, KILN_CAST_ID_INSTANCE, 14 + 2 * i);
        kiln_cast_writer_u64(w, inst, "rf", 15 + 2 * i);
        uint32_t file = kiln_cast_writer_node(w, inst, KILN_CAST_ID_FILE, 15 + 2 * i);
        kiln_cast_writer_string(w, file, "p", refs[i]);
    }
    uint32_t meta = kiln_cast_writer_node(w, root, KILN_CAST_ID_METADATA, 20);
    kiln_cast_writer_string(w, meta, "a", "tester");
    kiln_cast_writer_string(w, meta, "up", "y");
    save(w, "scene.cast", path, cap);
}

/* ---- the JSON writer, directly ---------------------------------------------------------------- */

static char *capture_json(void (*fill)(kiln__json *), int indent, int *finish)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    kiln__json j;
    kiln__json_init(&j, f, indent);
    fill(&j);
    *finish = kiln__json_finish(&j);
    fflush(f);
    char *text = slurp_fd(fileno(f), NULL);
    fclose(f);
    return text;
}

static void fill_nested(kiln__json *j)
{
    kiln__json_begin_object(j);
    kiln__json_key_u64(j, "big", UINT64_MAX);
    kiln__json_key_i64(j, "neg", -5);
    kiln__json_key_f64(j, "nan", NAN);
    kiln__json_key_f64(j, "inf", -INFINITY);
    kiln__json_key_f64(j, "third", 1.0f / 3.0f);
    kiln__json_key(j, "empty_array");
    kiln__json_begin_array(j);
    kiln__json_end_array(j);
    kiln__json_key(j, "empty_object");
    kiln__json_begin_object(j);
    kiln__json_end_object(j);
    kiln__json_key(j, "list");
    kiln__json_begin_array(j);
    kiln__json_bool(j, 1);
    kiln__json_null(j);
    kiln__json_begin_array_inline(j);
    kiln__json_u64(j, 1);
    kiln__json_begin_object_inline(j);
    kiln__json_key_string(j, "k", "v");
    kiln__json_end_object(j);
    kiln__json_end_array(j);
    kiln__json_string(j, NULL);
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

static void check_nested(const char *text)
{
    jv v = json_parse(text);
    cr_expect_eq(v.count, 8);
    cr_expect(strstr(text, "18446744073709551615") != NULL, "u64 printed exactly: %s", text);
    cr_expect_eq(jnum(jget(&v, "neg"), "neg"), -5);
    cr_expect_eq(jget(&v, "nan")->type, J_NULL);
    cr_expect_eq(jget(&v, "inf")->type, J_NULL);
    cr_expect_eq((float)jnum(jget(&v, "third"), "third"), 1.0f / 3.0f, "%%.9g round-trips a float");
    cr_expect_eq(jget(&v, "empty_array")->count, 0);
    cr_expect_eq(jget(&v, "empty_object")->type, J_OBJ);
    const jv *list = jget(&v, "list");
    cr_expect_eq(list->count, 4);
    cr_expect_eq(jat(list, 2)->count, 2);
    cr_expect_str_eq(jstr(jget(jat(jat(list, 2), 1), "k"), "k"), "v");
    cr_expect_eq(jat(list, 3)->type, J_NULL);
    json_free(&v);
}

Test(json_writer, nests_with_correct_commas_indented_and_compact)
{
    int finish;
    char *pretty = capture_json(fill_nested, 2, &finish);
    cr_expect_eq(finish, 0);
    check_nested(pretty);
    cr_expect(strstr(pretty, "[1, {\"k\": \"v\"}]") != NULL, "inline containers stay on one line:\n%s", pretty);
    free(pretty);
    char *compact = capture_json(fill_nested, 0, &finish);
    cr_expect_eq(finish, 0);
    check_nested(compact);
    cr_expect_eq(strchr(compact, '\n'), compact + strlen(compact) - 1, "one line: %s", compact);
    free(compact);
}

static void fill_strings(kiln__json *j)
{
    kiln__json_begin_array(j);
    kiln__json_string(j, "quote\" backslash\\ slash/ tab\t nl\n cr\r bs\b ff\f");
    kiln__json_string_n(j, "nul\0bell\x07 esc\x1b del\x7f", 20);
    kiln__json_string(j, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");     /* valid 2, 3, 4-byte sequences */
    kiln__json_string(j, "bad\xff lone\x80 trunc\xe2\x82");               /* invalid bytes */
    kiln__json_string(j, "overlong\xc0\xaf surrogate\xed\xa0\x80 big\xf4\x90\x80\x80");
    kiln__json_end_array(j);
}

Test(json_writer, escapes_control_characters_and_replaces_invalid_utf8)
{
    int finish;
    char *text = capture_json(fill_strings, 0, &finish);
    cr_expect_eq(finish, 0);
    for (const char *c = text; *c; c++)
        cr_expect((unsigned char)*c >= 0x20 || *c == '\n', "raw control byte 0x%02x in %s", *c, text);
    cr_expect(strstr(text, "\\u0000") && strstr(text, "\\u0007") && strstr(text, "\\u001b") && strstr(text, "\\u007f"),
              "control characters as \\u escapes: %s", text);
    jv v = json_parse(text);
    cr_expect_str_eq(jstr(jat(&v, 0), "0"), "quote\" backslash\\ slash/ tab\t nl\n cr\r bs\b ff\f");
    cr_expect_eq(memcmp(jat(&v, 1)->str, "nul\0bell\x07 esc\x1b del\x7f", 20), 0);
    cr_expect_str_eq(jstr(jat(&v, 2), "2"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
    cr_expect_str_eq(jstr(jat(&v, 3), "3"), "bad\xef\xbf\xbd lone\xef\xbf\xbd trunc\xef\xbf\xbd\xef\xbf\xbd");
    cr_expect_str_eq(jstr(jat(&v, 4), "4"),
                     "overlong\xef\xbf\xbd\xef\xbf\xbd surrogate\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                     " big\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    json_free(&v);
    free(text);
}

static void fill_misuse_value_without_key(kiln__json *j)
{
    kiln__json_begin_object(j);
    kiln__json_u64(j, 1);
    kiln__json_end_object(j);
}

static void fill_misuse_unclosed(kiln__json *j)
{
    kiln__json_begin_array(j);
    kiln__json_begin_object(j);
    kiln__json_end_object(j);
}

static void fill_misuse_too_deep(kiln__json *j)
{
    for (int i = 0; i < KILN_JSON_MAX_DEPTH + 4; i++) kiln__json_begin_array(j);
    for (int i = 0; i < KILN_JSON_MAX_DEPTH + 4; i++) kiln__json_end_array(j);
}

Test(json_writer, reports_misuse)
{
    void (*cases[])(kiln__json *) = {fill_misuse_value_without_key, fill_misuse_unclosed, fill_misuse_too_deep};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int finish;
        char *text = capture_json(cases[i], 2, &finish);
        cr_expect_eq(finish, -1, "case %zu should be reported: %s", i, text);
        free(text);
    }
}

/* ---- usage and help ---------------------------------------------------------------------------- */

Test(cli_usage, no_arguments_prints_usage_and_exits_1)
{
    const char *args[] = {NULL};
    run_result r = run_kiln(args);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "Usage:") != NULL, "usage on stderr: %s", r.err);
    run_free(&r);
}

Test(cli_usage, unknown_command_or_option_exits_1)
{
    const char *const cases[][4] = {
        {"frobnicate", NULL},
        {"--frobnicate", NULL},
        {"inspect", "--frobnicate", "x.cast", NULL},
        {"inspect", "-z", "x.cast", NULL},
        {"inspect", "--json=yes", "x.cast", NULL},
        {"help", "frobnicate", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_kiln(cases[i]);
        cr_expect_eq(r.status, 1, "kiln %s %s: status %d", cases[i][0], cases[i][1] ? cases[i][1] : "", r.status);
        cr_expect(strstr(r.err, "kiln: ") == r.err && strstr(r.err, "--help"), "message and hint on stderr: %s", r.err);
        cr_expect_eq(r.out_len, 0, "nothing on stdout: %s", r.out);
        run_free(&r);
    }
}

Test(cli_usage, inspect_takes_exactly_one_file)
{
    const char *none[] = {"inspect", NULL};
    run_result r = run_kiln(none);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "missing input file") != NULL, "%s", r.err);
    run_free(&r);
    const char *two[] = {"inspect", "a.cast", "b.cast", NULL};
    r = run_kiln(two);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "a.cast") && strstr(r.err, "b.cast"), "%s", r.err);
    run_free(&r);
}

Test(cli_help, lists_verbs_and_exit_codes)
{
    const char *const cases[][2] = {{"--help", NULL}, {"-h", NULL}, {"help", NULL}};
    for (size_t i = 0; i < 3; i++) {
        run_result r = run_kiln(cases[i]);
        cr_expect_eq(r.status, 0, "kiln %s", cases[i][0]);
        cr_expect(strstr(r.out, "inspect") != NULL, "verb listed: %s", r.out);
        cr_expect(strstr(r.out, "Exit status") && strstr(r.out, "  0  ") && strstr(r.out, "  1  ") &&
                      strstr(r.out, "  2  ") && strstr(r.out, "  4  "),
                  "exit codes documented: %s", r.out);
        run_free(&r);
    }
}

Test(cli_help, verb_help_is_the_same_three_ways)
{
    const char *const cases[][3] = {{"help", "inspect", NULL}, {"inspect", "--help", NULL}, {"inspect", "-h", NULL}};
    char *first = NULL;
    for (size_t i = 0; i < 3; i++) {
        run_result r = run_kiln(cases[i]);
        cr_expect_eq(r.status, 0);
        cr_expect(strstr(r.out, "Usage: kiln inspect") && strstr(r.out, "--json") && strstr(r.out, "--quiet"),
                  "%s", r.out);
        if (!first) first = strdup(r.out);
        else cr_expect_str_eq(r.out, first);
        run_free(&r);
    }
    free(first);
}

Test(cli_help, version_prints_build_info)
{
    const char *args[] = {"--version", NULL};
    run_result r = run_kiln(args);
    cr_expect_eq(r.status, 0);
    /* The build information, then one line per importer (name, description). */
    char want[2048];
    int n = snprintf(want, sizeof want, "%s\nimporters:\n", kiln_build_info());
    for (uint32_t i = 0; i < kiln_importer_count() && n > 0 && (size_t)n < sizeof want; i++)
        n += snprintf(want + n, sizeof want - (size_t)n, "  %-14s %s\n", kiln_importer_at(i)->name,
                      kiln_importer_at(i)->description);
    cr_expect_str_eq(r.out, want);
    cr_expect(strstr(r.out, "\n  cast ") != NULL, "the Cast importer is listed: %s", r.out);
    run_free(&r);
}

/* ---- inspect on written files ------------------------------------------------------------------ */

/* Exact equality of a "nodes" object with the expected (kind, count) pairs. */
static void expect_nodes(const jv *nodes, const char *const *kinds, const int *counts, size_t n, const char *file)
{
    cr_assert(nodes && nodes->type == J_OBJ, "%s: no \"nodes\" object", file);
    cr_expect_eq(nodes->count, n, "%s: %zu kinds reported, %zu expected", file, nodes->count, n);
    for (size_t i = 0; i < n; i++) {
        const jv *c = jget(nodes, kinds[i]);
        cr_expect(c && c->type == J_NUM && c->num == counts[i], "%s: %s should be %d, got %g", file, kinds[i],
                  counts[i], c && c->type == J_NUM ? c->num : -1.0);
    }
}

Test(cli_inspect, json_of_a_written_scene_has_the_hand_computed_counts, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    char path[512];
    write_scene(path, sizeof path);
    const char *args[] = {"inspect", "--json", path, NULL};
    run_result r = run_kiln(args);
    cr_assert_eq(r.status, 0, "status %d, stderr:\n%s", r.status, r.err);
    jv doc = json_parse(r.out);

    static const char *const kinds[] = {"Root", "Model", "Skeleton", "Bone", "Mesh", "Material", "File",
                                        "Animation", "Curve", "NotificationTrack", "Instance", "Metadata"};
    static const int counts[] = {1, 1, 1, 3, 1, 1, 4, 1, 2, 1, 3, 1};
    expect_nodes(jget(&doc, "nodes"), kinds, counts, 12, "scene.cast");

    const jv *file = jget(&doc, "file");
    struct stat st;
    stat(path, &st);
    cr_expect_eq(jnum(jget(file, "bytes"), "bytes"), (double)st.st_size);
    cr_expect_eq(jnum(jget(file, "version"), "version"), 1);
    cr_expect_eq(jnum(jget(file, "roots"), "roots"), 1);

    const jv *model = jat(jget(&doc, "models"), 0);
    cr_assert_not_null(model);
    cr_expect_eq(jget(&doc, "models")->count, 1);
    cr_expect_str_eq(jstr(jget(model, "name"), "model name"), "hero");
    cr_expect_str_eq(jstr(jget(model, "node"), "model node"), "Root[0]/Model[0]");
    const jv *pos = jget(jget(model, "transform"), "position");
    cr_assert(pos && pos->count == 3);
    cr_expect(pos->items[0].num == 1 && pos->items[1].num == 2 && pos->items[2].num == 3);

    const jv *skel = jat(jget(model, "skeletons"), 0);
    cr_expect_eq(jnum(jget(skel, "bones"), "bones"), 3);
    cr_expect_eq(jnum(jget(skel, "depth"), "depth"), 3);
    cr_expect_eq(jnum(jget(skel, "roots"), "roots"), 1);
    cr_expect_eq(jnum(jget(skel, "ik_handles"), "ik"), 0);

    const jv *mesh = jat(jget(model, "meshes"), 0);
    cr_expect_str_eq(jstr(jget(mesh, "name"), "mesh name"), "body");
    cr_expect_eq(jnum(jget(mesh, "vertices"), "vertices"), 4);
    cr_expect_eq(jnum(jget(mesh, "faces"), "faces"), 2);
    cr_expect_eq(jnum(jget(mesh, "uv_layers"), "uv"), 1);
    cr_expect_eq(jget(mesh, "color_layers")->count, 0);
    cr_expect_eq(jget(mesh, "normals")->num, 1);
    cr_expect_eq(jget(mesh, "tangents")->num, 0);
    cr_expect_eq(jnum(jget(mesh, "max_influence"), "mi"), 0);
    cr_expect_eq(jnum(jget(mesh, "bad_index_faces"), "bad"), 0);
    cr_expect_str_eq(jstr(jget(jget(mesh, "material"), "name"), "material"), "skin");

    const jv *mat = jat(jget(model, "materials"), 0);
    cr_expect_str_eq(jstr(jget(mat, "type"), "type"), "pbr");
    const jv *slot = jat(jget(mat, "slots"), 0);
    cr_expect_str_eq(jstr(jget(slot, "name"), "slot"), "albedo");
    cr_expect_str_eq(jstr(jget(slot, "kind"), "kind"), "file");
    cr_expect_str_eq(jstr(jget(slot, "path"), "path"), "skin.png");

    const jv *anim = jat(jget(&doc, "animations"), 0);
    cr_expect_str_eq(jstr(jget(anim, "name"), "anim"), "walk");
    cr_expect_eq(jnum(jget(anim, "framerate"), "fr"), 30);
    cr_expect_eq(jget(anim, "looping")->num, 1);
    const jv *range = jget(anim, "frame_range");
    cr_assert(range && range->count == 2);
    cr_expect(range->items[0].num == 0 && range->items[1].num == 25, "range over curves and notifications");
    cr_expect_float_eq(jnum(jget(anim, "duration_s"), "duration"), 25.0 / 30.0, 1e-6);
    const jv *curves = jget(anim, "curves");
    cr_expect_eq(jnum(jget(curves, "total"), "total"), 2);
    cr_expect_eq(jnum(jget(jget(curves, "by_property"), "tx"), "tx"), 1);
    cr_expect_eq(jnum(jget(jget(curves, "by_property"), "rq"), "rq"), 1);
    cr_expect_eq(jnum(jget(jget(curves, "by_property"), "sx"), "sx"), 0);
    cr_expect_eq(jnum(jget(jget(curves, "by_mode"), "absolute"), "abs"), 1);
    cr_expect_eq(jnum(jget(jget(curves, "by_mode"), "relative"), "rel"), 1);
    const jv *track = jat(jget(anim, "notification_tracks"), 0);
    cr_expect_str_eq(jstr(jget(track, "name"), "track"), "step");
    cr_expect_eq(jnum(jget(track, "keys"), "keys"), 2);

    const jv *inst = jget(&doc, "instances");
    cr_expect_eq(jnum(jget(inst, "count"), "count"), 3);
    const jv *by_path = jget(inst, "by_path");
    cr_assert(by_path && by_path->count == 2);
    cr_expect_str_eq(jstr(jget(jat(by_path, 0), "path"), "p0"), "a.cast");
    cr_expect_eq(jnum(jget(jat(by_path, 0), "count"), "c0"), 2);
    cr_expect_str_eq(jstr(jget(jat(by_path, 1), "path"), "p1"), "b.cast");
    cr_expect_eq(jnum(jget(jat(by_path, 1), "count"), "c1"), 1);

    const jv *meta = jget(&doc, "metadata");
    cr_expect_str_eq(jstr(jget(meta, "author"), "author"), "tester");
    cr_expect_str_eq(jstr(jget(meta, "up"), "up"), "y");
    cr_expect_eq(jget(meta, "software")->type, J_NULL);

    cr_expect_eq(jnum(jget(jget(&doc, "summary"), "errors"), "errors"), 0);
    cr_expect_eq(jnum(jget(jget(&doc, "summary"), "exit_status"), "exit"), 0);
    json_free(&doc);
    run_free(&r);
}

Test(cli_inspect, text_summary_of_a_written_scene, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    char path[512];
    write_scene(path, sizeof path);
    const char *args[] = {"inspect", path, NULL};
    run_result r = run_kiln(args);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    static const char *const want[] = {
        "Cast version 1, 1 root",
        ("nodes: Root 1, Model 1, Mesh 1, Skeleton 1, Bone 3, Animation 1, Curve 2, NotificationTrack 1, Material 1, "
         "File 4, Instance 3, Metadata 1 (20 total)"),
        "model 'hero' [Root[0]/Model[0]]",
        "skeleton: 3 bones, depth 3, 1 root",
        "mesh 'body': 4 vertices, 2 faces",
        "material: 'skin'",
        "albedo",
        "'skin.png'",
        "animation 'walk' [Root[0]/Animation[0]]: 30 fps, looping, frames [0, 25]",
        "by property: rq 1, tx 1; by mode: absolute 1, relative 1",
        "notification track 'step': 2 keys",
        "instances: 3",
        "metadata: author 'tester', up y",
        "diagnostics: 0 errors",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect(strstr(r.out, want[i]) != NULL, "missing \"%s\" in:\n%s", want[i], r.out);
    run_free(&r);
}

Test(cli_inspect, dropped_data_prints_summary_and_errors_then_exits_2, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    static const uint32_t faces[6] = {0, 1, 2, 0, 2, 9}; /* vertex 9 of 4 */
    add_quad_mesh(w, model, 7, faces, 0);
    char path[512];
    save(w, "bad_face.cast", path, sizeof path);

    const char *args[] = {"inspect", "--quiet", path, NULL};
    run_result r = run_kiln(args);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.out, "mesh 'body': 4 vertices, 2 faces") != NULL, "summary still printed: %s", r.out);
    cr_expect(strstr(r.out, "1 with a bad index") != NULL, "%s", r.out);
    char want[600];
    snprintf(want, sizeof want, "%s: error: Root[0]/Model[0]/Mesh[0].f: ", path);
    cr_expect(strstr(r.err, want) != NULL, "error printed even with --quiet, as 'path: error: node: msg': %s", r.err);
    cr_expect(strstr(r.err, "(byte offset ") != NULL, "%s", r.err);
    run_free(&r);

    const char *json_args[] = {"inspect", "--json", "-q", path, NULL};
    r = run_kiln(json_args);
    cr_expect_eq(r.status, 2);
    jv doc = json_parse(r.out);
    const jv *d = jat(jget(&doc, "diagnostics"), 0);
    cr_assert_not_null(d, "a diagnostic in the JSON");
    cr_expect_str_eq(jstr(jget(d, "severity"), "severity"), "error");
    cr_expect_str_eq(jstr(jget(d, "code"), "code"), "ERR_CAST_INDEX_RANGE");
    cr_expect_str_eq(jstr(jget(d, "path"), "path"), "Root[0]/Model[0]/Mesh[0].f");
    cr_expect_eq(jget(d, "offset")->type, J_NUM);
    cr_expect_eq(jnum(jget(jat(jget(jat(jget(&doc, "models"), 0), "meshes"), 0), "bad_index_faces"), "bad"), 1);
    cr_expect_eq(jnum(jget(jget(&doc, "summary"), "exit_status"), "exit"), 2);
    json_free(&doc);
    run_free(&r);
}

Test(cli_inspect, warnings_exit_0_and_quiet_silences_them, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    /* A valid scene plus an unknown node, which the reader skips with a warning. */
    static const unsigned char unknown[24] = {'U', 'K', 'N', 'K', 24};
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    static const uint32_t faces[6] = {0, 1, 2, 0, 2, 3};
    add_quad_mesh(w, model, 7, faces, 0);
    cr_assert_eq(kiln_cast_writer_raw(w, model, unknown, sizeof unknown), KILN_OK);
    char path[512];
    save(w, "unknown.cast", path, sizeof path);

    const char *args[] = {"inspect", "--json", path, NULL};
    run_result r = run_kiln(args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, ": warning: Root[0]/Model[0]/Unknown") != NULL, "%s", r.err);
    jv doc = json_parse(r.out);
    static const char *const kinds[] = {"Root", "Model", "Mesh", "Unknown"};
    static const int counts[] = {1, 1, 1, 1};
    expect_nodes(jget(&doc, "nodes"), kinds, counts, 4, "unknown.cast");
    cr_expect_eq(jnum(jget(jget(&doc, "summary"), "warnings"), "warnings"), 1);
    json_free(&doc);
    run_free(&r);

    const char *quiet[] = {"inspect", "--quiet", path, NULL};
    r = run_kiln(quiet);
    cr_expect_eq(r.status, 0);
    cr_expect_str_empty(r.err);
    cr_expect(strstr(r.out, "Unknown 1") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_inspect, parts_under_an_unexpected_parent_are_listed_as_unattached, .init = make_tmp_dir,
     .fini = remove_tmp_dir)
{
    /* Root > Mesh (no Model), Root > Curve (no Animation), then a regular Model and Animation. */
    static const uint32_t faces[6] = {0, 1, 2, 0, 2, 3};
    static const uint32_t kb[1] = {7};
    static const float kv[1] = {1};
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    add_quad_mesh(w, root, 2, faces, 0);
    uint32_t curves[2];
    curves[0] = kiln_cast_writer_node(w, root, KILN_CAST_ID_CURVE, 3);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 4);
    add_quad_mesh(w, model, 5, faces, 0);
    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 6);
    static const float fr = 24;
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    curves[1] = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 7);
    for (int c = 0; c < 2; c++) {
        kiln_cast_writer_string(w, curves[c], "nn", "b");
        kiln_cast_writer_string(w, curves[c], "kp", "tx");
        kiln_cast_writer_ints(w, curves[c], "kb", kb, 1);
        kiln_cast_writer_floats(w, curves[c], "kv", KILN_CAST_TYPE_FLOAT, kv, 1);
    }
    char path[512];
    save(w, "misplaced.cast", path, sizeof path);

    const char *args[] = {"inspect", "--json", path, NULL};
    run_result r = run_kiln(args);
    cr_expect_eq(r.status, 0, "misplaced nodes are read with a warning: %s", r.err);
    jv doc = json_parse(r.out);
    const jv *models = jget(&doc, "models");
    cr_assert(models && models->count == 2, "the Model plus the unattached holder, last");
    cr_expect_eq(jget(jat(models, 0), "unattached")->num, 0);
    cr_expect_eq(jget(jat(models, 0), "meshes")->count, 1);
    cr_expect_eq(jget(jat(models, 1), "unattached")->num, 1);
    cr_expect_eq(jget(jat(models, 1), "node")->type, J_NULL);
    cr_expect_str_eq(jstr(jget(jat(jget(jat(models, 1), "meshes"), 0), "node"), "mesh"), "Root[0]/Mesh[0]");
    const jv *anims = jget(&doc, "animations");
    cr_assert(anims && anims->count == 2);
    cr_expect_eq(jnum(jget(jget(jat(anims, 0), "curves"), "total"), "curves"), 1);
    cr_expect_eq(jnum(jat(jget(jat(anims, 0), "frame_range"), 1), "max frame"), 7);
    cr_expect_eq(jget(jat(anims, 1), "unattached")->num, 1);
    cr_expect_eq(jnum(jget(jget(jat(anims, 1), "curves"), "total"), "curves"), 1);
    int unexpected = 0;
    const jv *diags = jget(&doc, "diagnostics");
    for (size_t i = 0; i < diags->count; i++)
        unexpected += strcmp(jstr(jget(&diags->items[i], "code"), "code"), "ERR_CAST_UNEXPECTED_PARENT") == 0;
    cr_expect_eq(unexpected, 2, "one warning per misplaced node:\n%s", r.out);
    json_free(&doc);
    run_free(&r);
}

Test(cli_inspect, names_from_the_file_are_escaped, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "q\"b\\s\x1b[31m\xff");
    char path[512];
    save(w, "names.cast", path, sizeof path);

    run_result r = inspect_ok(path, 1);
    jv doc = json_parse(r.out);
    cr_expect_str_eq(jstr(jget(jat(jget(&doc, "models"), 0), "name"), "name"), "q\"b\\s\x1b[31m\xef\xbf\xbd");
    json_free(&doc);
    run_free(&r);

    const char *text_args[] = {"inspect", path, NULL};
    r = run_kiln(text_args);
    cr_expect(strchr(r.out, '\x1b') == NULL, "no raw escape character reaches the terminal");
    cr_expect(strstr(r.out, "model 'q\"b\\s?[31m") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_inspect, unreadable_input_exits_2_naming_the_path)
{
    const char *args[] = {"inspect", "/nonexistent/dir/missing.cast", NULL};
    run_result r = run_kiln(args);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "'/nonexistent/dir/missing.cast'") && strstr(r.err, "No such file"), "%s", r.err);
    run_free(&r);
}

Test(cli_inspect, output_failure_exits_4, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    if (access("/dev/full", W_OK) != 0) cr_skip_test("/dev/full not available: skipping");
    char path[512];
    write_scene(path, sizeof path);
    const char *args[] = {"inspect", path, NULL};
    run_result r = run_kiln_to(args, "/dev/full");
    cr_expect_eq(r.status, 4);
    cr_expect(strstr(r.err, "error writing to standard output") != NULL, "%s", r.err);
    run_free(&r);
    const char *json_args[] = {"inspect", "--json", path, NULL};
    r = run_kiln_to(json_args, "/dev/full");
    cr_expect_eq(r.status, 4);
    run_free(&r);
}

/* ---- inspect on baked blobs: animation clips ------------------------------------------------------ */

/* The walk clip of the bundled samples, from samples/README.md and samples/make_samples.c:
 *   fr 30, lo 1, keys every 3 frames from 0 to 30 -> frames [0, 30], 31 frames, 1 s, looping;
 *   curves on root (tx ty tz), pelvis (ty rq), spine (rq), chest (rq, sx sy sz), neck (rq),
 *   head (rq, sx sy sz): 6 bones, which are bones 0..5 of character.cast's skeleton in the same
 *   order, so the 6 joint slots fill one SoA block without placeholders. Every component
 *   varies for at least one bone (tx, tz: root; ty: pelvis; rotations; sx sy sz: chest), so
 *   a lossless clip stores all 10 components per frame as raw floats: a row is 10 x 32 bytes,
 *   and its data is 1 constant block (320 bytes) + 10 tracks (72 bytes each) + 31 rows
 *   = 320 + 720 + 9920 = 10960 bytes. Scalars chest_breathe (bs) and body (vb): 2 x 31 floats
 *   = 248 bytes. One CurveModeOverride (neck, relative, rotation only); notification tracks
 *   footstep_left @ 0 and footstep_right @ 15. The walk is the second input: source 1. */
#define WALK_ROW_BYTES    320
#define WALK_DATA_BYTES   10960
#define WALK_SCALAR_BYTES 248

/* Bakes character.cast and character_walk.cast (in that order) with the bake options
 * `options` (NULL-terminated, may be empty) into tmp_dir/name. */
static void bake_samples(const char *name, const char *const *options, char *path, size_t cap)
{
    static const char *const inputs[2] = {KILN_SOURCE_DIR "/samples/character.cast",
                                           KILN_SOURCE_DIR "/samples/character_walk.cast"};
    snprintf(path, cap, "%s/%s", tmp_dir, name);
    const char *args[24];
    size_t n = 0;
    args[n++] = "bake";
    for (; options[0] && n < 16; options++) args[n++] = options[0];
    args[n++] = inputs[0];
    args[n++] = inputs[1];
    args[n++] = "-o";
    args[n++] = path;
    args[n] = NULL;
    run_result r = run_kiln(args);
    cr_assert_eq(r.status, 0, "bake %s: status %d, stderr:\n%s", name, r.status, r.err);
    run_free(&r);
}

/* Bakes the Cast file `cast` alone into tmp_dir/name. */
static void bake_file(const char *cast, const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmp_dir, name);
    const char *bake[] = {"bake", cast, "-o", path, NULL};
    run_result r = run_kiln(bake);
    cr_assert_eq(r.status, 0, "bake: %s", r.err);
    run_free(&r);
}

/* The document's only clip, checked to be the walk. */
static const jv *walk_clip(const jv *doc)
{
    const jv *anims = jget(doc, "animations");
    cr_assert(anims && anims->type == J_ARR && anims->count == 1, "one clip in the blob");
    const jv *a = jat(anims, 0);
    cr_expect_str_eq(jstr(jget(a, "name"), "name"), "walk");
    return a;
}

/* What lossless and lossy walk clips share: timing, slots, scalars, overrides, events. */
static void expect_walk_common(const jv *a)
{
    cr_expect_eq(jnum(jget(a, "source"), "source"), 1);
    cr_expect_eq(jnum(jget(a, "framerate"), "framerate"), 30);
    const jv *range = jget(a, "frame_range");
    cr_assert(range && range->count == 2, "frame_range");
    cr_expect(range->items[0].num == 0 && range->items[1].num == 30, "frames [0, 30]");
    cr_expect_eq(jnum(jget(a, "frames"), "frames"), 31);
    cr_expect_float_eq(jnum(jget(a, "duration_s"), "duration_s"), 1.0, 1e-9);
    cr_expect(jget(a, "looping") && jget(a, "looping")->type == J_BOOL && jget(a, "looping")->num == 1, "looping");
    cr_expect_eq(jnum(jget(a, "joint_slots"), "joint_slots"), 6);
    cr_expect_eq(jnum(jget(a, "placeholder_slots"), "placeholder_slots"), 0);
    cr_expect_eq(jnum(jget(a, "blocks"), "blocks"), 1);
    cr_expect_eq(jnum(jget(a, "scalar_bytes"), "scalar_bytes"), WALK_SCALAR_BYTES);

    const jv *scalars = jget(a, "scalars");
    cr_assert(scalars && scalars->count == 2, "two scalar tracks");
    cr_expect_str_eq(jstr(jget(jat(scalars, 0), "name"), "scalar 0"), "chest_breathe");
    cr_expect_str_eq(jstr(jget(jat(scalars, 0), "kind"), "kind 0"), "blend_shape");
    cr_expect_str_eq(jstr(jget(jat(scalars, 1), "name"), "scalar 1"), "body");
    cr_expect_str_eq(jstr(jget(jat(scalars, 1), "kind"), "kind 1"), "visibility");

    const jv *overrides = jget(a, "mode_overrides");
    cr_assert(overrides && overrides->count == 1, "one mode override");
    const jv *o = jat(overrides, 0);
    cr_expect_str_eq(jstr(jget(o, "bone"), "bone"), "neck");
    cr_expect_str_eq(jstr(jget(o, "mode"), "mode"), "relative");
    const jv *channels = jget(o, "channels");
    cr_assert(channels && channels->count == 1, "rotation only");
    cr_expect_str_eq(jstr(jat(channels, 0), "channel"), "r");

    const jv *events = jget(a, "events");
    cr_assert(events && events->count == 2, "two notification events");
    cr_expect_str_eq(jstr(jget(jat(events, 0), "name"), "event 0"), "footstep_left");
    cr_expect_eq(jnum(jget(jat(events, 0), "frame"), "frame 0"), 0);
    cr_expect_str_eq(jstr(jget(jat(events, 1), "name"), "event 1"), "footstep_right");
    cr_expect_eq(jnum(jget(jat(events, 1), "frame"), "frame 1"), 15);
}

/* Sum of the width histogram, whose entries must be ascending, in use, and quantised (lossy) or
 * raw floats (lossless). */
static double track_width_sum(const jv *a, int lossy)
{
    const jv *widths = jget(a, "track_widths");
    cr_assert(widths && widths->type == J_ARR, "track_widths");
    double sum = 0, last = 0;
    for (size_t i = 0; i < widths->count; i++) {
        double bits = jnum(jget(jat(widths, i), "bits"), "bits");
        double tracks = jnum(jget(jat(widths, i), "tracks"), "tracks");
        cr_expect(bits > last, "widths ascending and distinct");
        cr_expect(tracks > 0, "only widths in use are listed");
        if (lossy) cr_expect(bits >= 1 && bits <= 24, "lossy tracks are quantised: %g bits", bits);
        else cr_expect_eq(bits, 32, "lossless tracks are raw floats");
        last = bits;
        sum += tracks;
    }
    return sum;
}

static const char *const walk_text_common[] = {
    "records: 1 models, 1 skeletons, 8 bones",
    ", 1 animations\n",
    "animation 'walk' (source 1): 30 fps, frames [0, 30], 31 frames, 1 s, looping, ",
    "\n  joints: 6 slots in 1 block (6 named, 0 placeholders)\n",
    "\n  scalars: 'chest_breathe' blend shape, 'body' visibility\n",
    "\n  mode overrides: 'neck' relative on r\n",
    "\n  events: 'footstep_left' @ 0, 'footstep_right' @ 15\n",
};

static void expect_text(const char *out, const char *const *want, size_t n)
{
    for (size_t i = 0; i < n; i++) cr_expect(strstr(out, want[i]) != NULL, "missing \"%s\" in:\n%s", want[i], out);
}

Test(cli_inspect_blob, lossless_walk_clip_text_and_json, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    char path[512];
    static const char *const none[] = {NULL};
    bake_samples("walk.kiln", none, path, sizeof path);

    run_result r = inspect_ok(path, 0);
    expect_text(r.out, walk_text_common, sizeof walk_text_common / sizeof walk_text_common[0]);
    char want[160];
    static const char *const lossless[] = {
        "frames, 1 s, looping, lossless\n",
        "\n  tracks: 10 per frame (32-bit 10), 0 constant\n",
    };
    expect_text(r.out, lossless, 2);
    snprintf(want, sizeof want, "\n  data: %d bytes per frame, %d bytes + %d scalar bytes\n", WALK_ROW_BYTES,
             WALK_DATA_BYTES, WALK_SCALAR_BYTES);
    cr_expect(strstr(r.out, want) != NULL, "missing \"%s\" in:\n%s", want, r.out);
    cr_expect(strstr(r.out, "qw rebuilt") == NULL, "a lossless clip stores qw: %s", r.out);
    /* Clips come after the models and before the section table. */
    const char *model = strstr(r.out, "model 'character'"), *clip = strstr(r.out, "animation 'walk'");
    const char *sections = strstr(r.out, "sections:");
    cr_expect(model && clip && sections && model < clip && clip < sections, "%s", r.out);
    run_free(&r);

    r = inspect_ok(path, 1);
    jv doc = json_parse(r.out);
    const jv *a = walk_clip(&doc);
    expect_walk_common(a);
    cr_expect(jget(a, "lossy") && jget(a, "lossy")->type == J_BOOL && jget(a, "lossy")->num == 0, "lossless");
    cr_expect(jget(a, "error_bound_m") && jget(a, "error_bound_m")->type == J_NULL, "no bound when lossless");
    cr_expect(jget(a, "error_distance_m") && jget(a, "error_distance_m")->type == J_NULL);
    cr_expect_eq(jnum(jget(a, "tracks"), "tracks"), 10);
    cr_expect_eq(track_width_sum(a, 0), 10);
    cr_expect_eq(jnum(jget(a, "constant_pairs"), "constant_pairs"), 0);
    cr_expect_eq(jnum(jget(a, "rebuilt_qw_blocks"), "rebuilt_qw_blocks"), 0);
    cr_expect_eq(jnum(jget(a, "row_stride"), "row_stride"), WALK_ROW_BYTES);
    cr_expect_eq(jnum(jget(a, "data_bytes"), "data_bytes"), WALK_DATA_BYTES);
    json_free(&doc);
    run_free(&r);
}

/* Lossy: qw is never stored (rebuilt from qx, qy, qz, which vary), so at most the other 9
 * components are, every one quantised below 32 bits; whatever is not stored is a constant. */
static void expect_lossy_walk(const char *path, double bound_m, double distance_m, const char *text_bound)
{
    run_result r = inspect_ok(path, 0);
    expect_text(r.out, walk_text_common, sizeof walk_text_common / sizeof walk_text_common[0]);
    char want[160];
    snprintf(want, sizeof want, "frames, 1 s, looping, lossy (error %s)\n", text_bound);
    cr_expect(strstr(r.out, want) != NULL, "missing \"%s\" in:\n%s", want, r.out);
    cr_expect(strstr(r.out, ", qw rebuilt in 1 block\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "32-bit") == NULL, "no raw float track in a lossy clip: %s", r.out);
    run_free(&r);

    r = inspect_ok(path, 1);
    jv doc = json_parse(r.out);
    cr_expect_eq(jget(&doc, "quantized")->num, 1, "a lossy clip makes the blob quantized");
    const jv *a = walk_clip(&doc);
    expect_walk_common(a);
    cr_expect(jget(a, "lossy") && jget(a, "lossy")->type == J_BOOL && jget(a, "lossy")->num == 1, "lossy");
    cr_expect_float_eq(jnum(jget(a, "error_bound_m"), "error_bound_m"), bound_m, bound_m * 1e-6);
    cr_expect_float_eq(jnum(jget(a, "error_distance_m"), "error_distance_m"), distance_m, distance_m * 1e-6);
    double tracks = jnum(jget(a, "tracks"), "tracks");
    cr_expect(tracks >= 1 && tracks <= 9, "%g tracks", tracks);
    cr_expect_eq(track_width_sum(a, 1), tracks);
    cr_expect_eq(tracks + jnum(jget(a, "constant_pairs"), "constant_pairs"), 9);
    cr_expect_eq(jnum(jget(a, "rebuilt_qw_blocks"), "rebuilt_qw_blocks"), 1);
    double stride = jnum(jget(a, "row_stride"), "row_stride");
    cr_expect(stride < WALK_ROW_BYTES && (long)stride % 16 == 0, "row of %g bytes", stride);
    cr_expect_lt(jnum(jget(a, "data_bytes"), "data_bytes"), WALK_DATA_BYTES);
    json_free(&doc);
    run_free(&r);
}

Test(cli_inspect_blob, lossy_walk_clip_shows_its_bound, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    char path[512];
    static const char *const lossy[] = {"--lossy-anim", NULL};
    bake_samples("lossy.kiln", lossy, path, sizeof path);
    /* kiln/bake.h: the default bound is 0.1 mm at 10 cm from each joint. */
    expect_lossy_walk(path, 0.0001, 0.1, "0.1 mm at 10 cm");

    static const char *const custom[] = {"--lossy-anim", "--anim-error", "0.0005", "--anim-distance", "0.05", NULL};
    bake_samples("custom.kiln", custom, path, sizeof path);
    expect_lossy_walk(path, 0.0005, 0.05, "0.5 mm at 5 cm");
}

/* A clip baked with the skeleton it names in the same file (write_scene): the slots follow the
 * bone order root, child, leaf, and root, which has no curve, is a placeholder. child.tx moves
 * (keys 0, 1, 2): one raw track. leaf.rq holds the identity at both keys: its 4 components are
 * constants. Frames [0, 25] (leaf.rq from 0, the notification track up to 25): 26 rows of
 * 32 bytes (one track, padded to 16) after 1 constant block (320) and 1 track (72, then
 * padding to 400): 400 + 26 * 32 = 1232 bytes. */
Test(cli_inspect_blob, placeholder_slots_and_constant_components, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    char cast[512], path[512];
    write_scene(cast, sizeof cast);
    bake_file(cast, "scene.kiln", path, sizeof path);

    run_result r = inspect_ok(path, 0);
    static const char *const want[] = {
        "animation 'walk' (source 0): 30 fps, frames [0, 25], 26 frames, 0.833333 s, looping, lossless\n",
        "\n  joints: 3 slots in 1 block (2 named, 1 placeholder)\n",
        "\n  tracks: 1 per frame (32-bit 1), 4 constant\n",
        "\n  data: 32 bytes per frame, 1232 bytes + 0 scalar bytes\n",
        "\n  events: 'step' @ 3, 'step' @ 25\n",
    };
    expect_text(r.out, want, sizeof want / sizeof want[0]);
    cr_expect(strstr(r.out, "  scalars:") == NULL && strstr(r.out, "  mode overrides:") == NULL,
              "empty lists are left out: %s", r.out);
    run_free(&r);

    r = inspect_ok(path, 1);
    jv doc = json_parse(r.out);
    const jv *a = walk_clip(&doc);
    cr_expect_eq(jnum(jget(a, "source"), "source"), 0);
    cr_expect_float_eq(jnum(jget(a, "duration_s"), "duration_s"), 25.0 / 30.0, 1e-9);
    cr_expect_eq(jnum(jget(a, "joint_slots"), "joint_slots"), 3);
    cr_expect_eq(jnum(jget(a, "placeholder_slots"), "placeholder_slots"), 1);
    cr_expect_eq(jnum(jget(a, "tracks"), "tracks"), 1);
    cr_expect_eq(jnum(jget(a, "constant_pairs"), "constant_pairs"), 4);
    cr_expect_eq(jnum(jget(a, "data_bytes"), "data_bytes"), 1232);
    cr_expect_eq(jget(a, "scalars")->count, 0);
    cr_expect_eq(jget(a, "mode_overrides")->count, 0);
    cr_expect_eq(jget(a, "events")->count, 2);
    json_free(&doc);
    run_free(&r);
}

/* 25 notification keys: the text lists the first 20 and counts the rest, JSON lists them all.
 * Event names reach the terminal escaped. */
Test(cli_inspect_blob, long_event_lists_are_cut_in_text, .init = make_tmp_dir, .fini = remove_tmp_dir)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 2);
    kiln_cast_writer_string(w, anim, "n", "cues");
    static const float fr = 24;
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    uint32_t curve = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 3);
    kiln_cast_writer_string(w, curve, "nn", "b");
    kiln_cast_writer_string(w, curve, "kp", "tx");
    static const uint32_t kb[2] = {0, 24};
    static const float kv[2] = {0, 1};
    kiln_cast_writer_ints(w, curve, "kb", kb, 2);
    kiln_cast_writer_floats(w, curve, "kv", KILN_CAST_TYPE_FLOAT, kv, 2);
    uint32_t track = kiln_cast_writer_node(w, anim, KILN_CAST_ID_NOTIFICATION_TRACK, 4);
    kiln_cast_writer_string(w, track, "n", "ti\x1b[1mck");
    uint32_t keys[25];
    for (uint32_t i = 0; i < 25; i++) keys[i] = i;
    kiln_cast_writer_ints(w, track, "kb", keys, 25);
    char cast[512], path[512];
    save(w, "cues.cast", cast, sizeof cast);
    bake_file(cast, "cues.kiln", path, sizeof path);

    run_result r = inspect_ok(path, 0);
    cr_expect(strstr(r.out, "animation 'cues' (source 0): 24 fps, frames [0, 24], 25 frames, 1 s, not looping, "
                            "lossless\n") != NULL,
              "%s", r.out);
    cr_expect(strchr(r.out, '\x1b') == NULL, "no raw escape character reaches the terminal");
    cr_expect(strstr(r.out, "\n  events: 'ti?[1mck' @ 0, 'ti?[1mck' @ 1,") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, ", 'ti?[1mck' @ 19, ... 5 more\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "@ 20") == NULL, "%s", r.out);
    run_free(&r);

    r = inspect_ok(path, 1);
    jv doc = json_parse(r.out);
    const jv *events = jget(jat(jget(&doc, "animations"), 0), "events");
    cr_assert(events && events->count == 25, "every event in JSON");
    cr_expect_str_eq(jstr(jget(jat(events, 24), "name"), "name"), "ti\x1b[1mck");
    cr_expect_eq(jnum(jget(jat(events, 24), "frame"), "frame"), 24);
    cr_expect(jget(jat(jget(&doc, "animations"), 0), "looping")->num == 0, "not looping");
    json_free(&doc);
    run_free(&r);
}

/* ---- the shared corpus --------------------------------------------------------------------------- */

static char *read_text(const char *path)
{
    file_bytes f;
    if (!read_file(path, &f)) return NULL;
    char *s = malloc(f.size + 1);
    memcpy(s, f.data, f.size);
    s[f.size] = 0;
    file_bytes_free(&f);
    return s;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
    size_t lead = strspn(s, " \t");
    memmove(s, s + lead, n - lead + 1);
}

Test(corpus, good_files_have_the_manifest_node_counts)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip_test("corpus not found at %s: skipping", dir);
    char manifest_path[1200];
    snprintf(manifest_path, sizeof manifest_path, "%s/MANIFEST.md", dir);
    char *manifest = read_text(manifest_path);
    cr_assert_not_null(manifest, "cannot read %s", manifest_path);

    int checked = 0;
    for (char *line = strtok(manifest, "\n"); line; line = strtok(NULL, "\n")) {
        /* Rows of the good-file table: "| `file` | bytes | Kind:n, Kind:n | ...". */
        if (strncmp(line, "| `", 3) != 0) continue;
        char *cols[4] = {0};
        char *cur = line + 1;
        for (int c = 0; c < 4 && cur; c++) {
            char *bar = strchr(cur, '|');
            if (bar) *bar = 0;
            cols[c] = cur;
            cur = bar ? bar + 1 : NULL;
        }
        if (!cols[2]) continue;
        trim(cols[0]);
        trim(cols[2]);
        size_t len = strlen(cols[0]);
        if (len < 3 || cols[0][len - 1] != '`') continue;
        cols[0][len - 1] = 0;
        const char *name = cols[0] + 1;
        if (strncmp(name, "bad/", 4) == 0 || !strchr(cols[2], ':')) continue;

        const char *kinds[32];
        int counts[32];
        size_t n = 0;
        char *save_ptr = NULL;
        for (char *item = strtok_r(cols[2], ",", &save_ptr); item && n < 32; item = strtok_r(NULL, ",", &save_ptr)) {
            trim(item);
            char *colon = strchr(item, ':');
            cr_assert_not_null(colon, "malformed nodes column for %s", name);
            *colon = 0;
            kinds[n] = item;
            counts[n++] = atoi(colon + 1);
        }

        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        const char *args[] = {"inspect", "--json", path, NULL};
        run_result r = run_kiln(args);
        cr_expect_eq(r.status, 0, "%s: status %d, stderr:\n%s", name, r.status, r.err);
        jv doc = json_parse(r.out);
        expect_nodes(jget(&doc, "nodes"), kinds, counts, n, name);
        json_free(&doc);
        run_free(&r);
        checked++;
    }
    free(manifest);
    cr_expect_geq(checked, 20, "only %d good files found in MANIFEST.md", checked);
}

/* What each malformed file must be rejected with. Alternatives are separated by '|'; files not
 * listed only need exit 2 and an error. */
static const struct {
    const char *file;
    int         status;
    const char *codes;
} kiln__bad_expect[] = {
    {"unknown_node_skip.cast", 0, NULL},
    {"zero_length_arrays.cast", 0, NULL},
    {"wrong_magic.cast", 2, "ERR_CAST_BAD_MAGIC"},
    {"truncated_header.cast", 2, "ERR_CAST_TRUNCATED_HEADER"},
    {"empty.cast", 2, "ERR_CAST_TRUNCATED_HEADER"},
    {"truncated_in_array.cast", 2, "ERR_CAST_TRUNCATED|ERR_CAST_ARRAY_OVERRUN"},
    {"node_size_overrun.cast", 2, "ERR_CAST_NODE_OVERRUN|ERR_CAST_TRUNCATED"},
    {"node_size_too_small.cast", 2, "ERR_CAST_NODE_TOO_SMALL"},
    {"prop_array_overrun.cast", 2, "ERR_CAST_ARRAY_OVERRUN"},
    {"prop_array_huge.cast", 2, "ERR_CAST_ARRAY_OVERRUN"},
    {"child_count_huge.cast", 2, "ERR_CAST_COUNT_IMPOSSIBLE"},
    {"root_count_mismatch.cast", 2, "ERR_CAST_ROOT_COUNT"},
    {"prop_name_overrun.cast", 2, "ERR_CAST_NAME_OVERRUN"},
    {"string_unterminated.cast", 2, "ERR_CAST_STRING_UNTERMINATED"},
    {"unknown_prop_type.cast", 2, "ERR_CAST_UNKNOWN_PROPERTY_TYPE"},
    {"face_index_out_of_range.cast", 2, "ERR_CAST_INDEX_RANGE"},
    {"curve_kb_kv_mismatch.cast", 2, "ERR_CAST_LENGTH_MISMATCH"},
    {"bone_parent_cycle.cast", 2, "ERR_CAST_BONE_CYCLE"},
    {"wrong_vector_prop_type.cast", 2, "ERR_CAST_WRONG_TYPE"},
};

static int code_in(const char *code, const char *alternatives)
{
    size_t n = strlen(code);
    for (const char *p = alternatives; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, code, n) == 0) return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

Test(corpus, bad_files_exit_with_the_expected_status_and_a_specific_error)
{
    char dir[1024], bad[1100];
    if (!corpus_dir(dir, sizeof dir)) cr_skip_test("corpus not found at %s: skipping", dir);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    DIR *d = opendir(bad);
    if (!d) cr_skip_test("corpus not found at %s: skipping", bad);
    int checked = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".cast") != 0) continue;
        int status = 2;
        const char *codes = NULL;
        for (size_t i = 0; i < sizeof kiln__bad_expect / sizeof kiln__bad_expect[0]; i++) {
            if (strcmp(kiln__bad_expect[i].file, e->d_name) == 0) {
                status = kiln__bad_expect[i].status;
                codes = kiln__bad_expect[i].codes;
            }
        }
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", bad, e->d_name);

        const char *text_args[] = {"inspect", path, NULL};
        run_result r = run_kiln(text_args);
        cr_expect_eq(r.status, status, "%s: status %d, expected %d; stderr:\n%s", e->d_name, r.status, status, r.err);
        if (status == 2) {
            char want[2100];
            snprintf(want, sizeof want, "%s: error: ", path);
            char *line = strstr(r.err, want);
            cr_expect(line != NULL, "%s: no '%s' line on stderr:\n%s", e->d_name, want, r.err);
            /* Specific: a message past the prefix that says more than the bare code text. */
            if (line) cr_expect(strlen(line) > strlen(want) + 20 && strstr(line, ": "), "%s: %s", e->d_name, line);
        }
        run_free(&r);

        const char *json_args[] = {"inspect", "--json", "--quiet", path, NULL};
        r = run_kiln(json_args);
        cr_expect_eq(r.status, status, "%s (--json)", e->d_name);
        jv doc = json_parse(r.out);
        const jv *diags = jget(&doc, "diagnostics");
        cr_assert(diags && diags->type == J_ARR, "%s: diagnostics array", e->d_name);
        int found = codes == NULL, errors = 0;
        for (size_t i = 0; i < diags->count; i++) {
            const jv *diag = &diags->items[i];
            if (strcmp(jstr(jget(diag, "severity"), "severity"), "error") != 0) continue;
            errors++;
            cr_expect(strlen(jstr(jget(diag, "message"), "message")) > 0);
            if (codes && code_in(jstr(jget(diag, "code"), "code"), codes)) found = 1;
        }
        cr_expect_eq(errors > 0, status == 2, "%s: %d error diagnostics", e->d_name, errors);
        cr_expect(found, "%s: no error with code %s in:\n%s", e->d_name, codes ? codes : "-", r.out);
        if (strcmp(e->d_name, "unknown_node_skip.cast") == 0) {
            static const char *const kinds[] = {"Root", "Model", "Mesh", "Unknown"};
            static const int counts[] = {1, 1, 1, 2};
            expect_nodes(jget(&doc, "nodes"), kinds, counts, 4, e->d_name);
            const jv *mesh = jat(jget(jat(jget(&doc, "models"), 0), "meshes"), 0);
            cr_expect_eq(jnum(jget(mesh, "vertices"), "vertices"), 3);
            cr_expect_eq(jnum(jget(mesh, "faces"), "faces"), 1);
        }
        json_free(&doc);
        run_free(&r);
        checked++;
    }
    closedir(d);
    cr_expect_geq(checked, 19, "only %d files in %s", checked, bad);
}

/* ---- the source-scene view -------------------------------------------------------------------- */

/* `inspect --source --json` on mesh_attributes.cast: what the Cast importer hands the bake,
 * against the corpus MANIFEST (one model, a quad of 4 vertices and 2 faces with 2 UV and 2
 * colour layers, a legacy-colour triangle, one 'pbr' material with 4 file and 2 colour slots). */
Test(cli_inspect_source, cast_scene_as_json)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    char path[1200];
    snprintf(path, sizeof path, "%s/mesh_attributes.cast", dir);
    const char *args[] = {"inspect", "--source", "--json", path, NULL};
    run_result r = run_kiln(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    jv doc = json_parse(r.out);
    cr_expect_str_eq(jstr(jget(&doc, "kind"), "kind"), "source");
    cr_expect_str_eq(jstr(jget(&doc, "format"), "format"), "cast");
    const jv *models = jget(&doc, "models");
    cr_assert(models && models->type == J_ARR && models->count == 1);
    const jv *meshes = jget(jat(models, 0), "meshes");
    cr_assert(meshes && meshes->type == J_ARR && meshes->count == 2);
    cr_expect_eq(jnum(jget(jat(meshes, 0), "vertices"), "vertices"), 4);
    cr_expect_eq(jnum(jget(jat(meshes, 0), "faces"), "faces"), 2);
    cr_expect_eq(jnum(jget(jat(meshes, 0), "uv_layers"), "uv_layers"), 2);
    cr_expect_eq(jnum(jget(jat(meshes, 0), "color_layers"), "color_layers"), 2);
    cr_expect_eq(jnum(jget(jat(meshes, 1), "color_layers"), "color_layers"), 1);
    const jv *mats = jget(jat(models, 0), "materials");
    cr_assert(mats && mats->type == J_ARR && mats->count == 1);
    cr_expect_str_eq(jstr(jget(jat(mats, 0), "type"), "type"), "pbr");
    const jv *slots = jget(jat(mats, 0), "slots");
    cr_assert(slots && slots->type == J_ARR && slots->count == 6);
    json_free(&doc);
    run_free(&r);
}

/* Bytes no importer recognises: exit 2, naming the formats this build reads. */
Test(cli_inspect_source, unrecognised_input_names_the_formats)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    char path[1200];
    snprintf(path, sizeof path, "%s/bad/wrong_magic.cast", dir);
    const char *args[] = {"inspect", "--source", path, NULL};
    run_result r = run_kiln(args);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "ERR_FORMAT_UNKNOWN") != NULL || strstr(r.err, "no format this build reads") != NULL,
              "%s", r.err);
    cr_expect(strstr(r.err, "cast") != NULL, "%s", r.err);
    run_free(&r);
}
