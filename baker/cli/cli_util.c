/* Shared helpers of the kiln CLI verbs: messages, whole-file loading, option parsing. */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- messages ------------------------------------------------------------------------------ */

int kiln__cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, KILN_CLI_NAME ": ");
    if (verb) fprintf(stderr, "%s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '" KILN_CLI_NAME " %s%s--help'.\n", verb ? verb : "", verb ? " " : "");
    return KILN_EXIT_USAGE;
}

void kiln__cli_put_result(FILE *out, kiln_result r)
{
    fputs(kiln_result_str(r), out);
    const kiln_diag *d = kiln_error_detail();
    if (d->code != r || (!d->path[0] && !d->message[0])) return;
    fputs(" (", out);
    kiln__cli_put_text(out, d->path, "");
    if (d->path[0] && d->message[0]) fputs(": ", out);
    kiln__cli_put_text(out, d->message, "");
    fputc(')', out);
}

const char *kiln__cli_severity_name(kiln_severity s)
{
    switch (s) {
    case KILN_SEVERITY_ERROR: return "error";
    case KILN_SEVERITY_WARNING: return "warning";
    default: return "info";
    }
}

void kiln__cli_put_text(FILE *out, const char *s, const char *fallback)
{
    if (!s) {
        fputs(fallback, out);
        return;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(c < 0x20 || c == 0x7F ? '?' : c, out);
    }
}

void kiln__cli_print_diag(FILE *out, const char *file, const kiln_diag *d)
{
    if (file) {
        kiln__cli_put_text(out, file, "");
        fputs(": ", out);
    }
    fprintf(out, "%s: ", kiln__cli_severity_name(d->severity));
    if (d->rule[0]) {
        fputc('[', out);
        kiln__cli_put_text(out, d->rule, "");
        fputs("] ", out);
    }
    if (d->path[0]) {
        kiln__cli_put_text(out, d->path, "");
        fputs(": ", out);
    }
    kiln__cli_put_text(out, d->message[0] ? d->message : kiln_result_str(d->code), "");
    if (d->offset != KILN_NO_OFFSET) fprintf(out, " (byte offset %llu)", (unsigned long long)d->offset);
    fputc('\n', out);
}

int kiln__cli_print_input_diag(FILE *out, const char *file, const kiln_diag *d)
{
    size_t n = strlen(file);
    if (strncmp(d->path, file, n) != 0 || (d->path[n] != ':' && d->path[n] != 0)) return 0;
    kiln_diag local = *d;
    const char *rest = d->path + n + (d->path[n] == ':');
    memmove(local.path, rest, strlen(rest) + 1);
    kiln__cli_print_diag(out, file, &local);
    return 1;
}

void kiln__cli_print_blob_diag(FILE *out, const char *file, const kiln_diag *d)
{
    const char *message = d->message[0] ? d->message : kiln_result_str(d->code);
    /* kiln_blob_open_file's I/O failures start with the file's path already. */
    size_t n = file ? strlen(file) : 0;
    if (file && !(strncmp(message, file, n) == 0 && message[n] == ':')) {
        kiln__cli_put_text(out, file, "");
        fputs(": ", out);
    }
    fprintf(out, "%s: ", kiln__cli_severity_name(d->severity));
    kiln__cli_put_text(out, message, "");
    fputc('\n', out);
}

int kiln__cli_finish_stdout(int status)
{
    /* Output is buffered, so a full disk or a closed descriptor usually shows only here. */
    errno = 0;
    int flush_failed = fflush(stdout) != 0;
    int saved = errno;
    if (flush_failed || ferror(stdout)) {
        fprintf(stderr, KILN_CLI_NAME ": error writing to standard output: %s\n",
                saved ? strerror(saved) : "write error");
        return KILN_EXIT_OUTPUT;
    }
    return status;
}

/* ---- files --------------------------------------------------------------------------------- */

static int kiln__cli_load_fail(const char *path, int err, unsigned char *buf, int fd)
{
    fprintf(stderr, KILN_CLI_NAME ": cannot read '");
    kiln__cli_put_text(stderr, path, "");
    fprintf(stderr, "': %s\n", strerror(err));
    free(buf);
    if (fd > STDIN_FILENO) close(fd);
    return 0;
}

int kiln__cli_file_load(const char *path, kiln__cli_file *out)
{
    out->data = NULL;
    out->size = 0;
    int is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY);
    if (fd < 0) return kiln__cli_load_fail(path, errno, NULL, -1);

    struct stat st;
    if (fstat(fd, &st) != 0) return kiln__cli_load_fail(path, errno, NULL, fd);
    if (S_ISDIR(st.st_mode)) return kiln__cli_load_fail(path, EISDIR, NULL, fd);

    /* A regular file is read into one block of its size; anything else (a pipe) grows. The
     * extra byte lets a regular file that grew meanwhile be noticed without a second pass. */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 1u << 16;
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size >= (uint64_t)SIZE_MAX)
        return kiln__cli_load_fail(path, EFBIG, NULL, fd);
    unsigned char *buf = malloc(cap);
    if (!buf) return kiln__cli_load_fail(path, ENOMEM, NULL, fd);
    size_t size = 0;
    for (;;) {
        if (size == cap) {
            if (cap > SIZE_MAX / 2) return kiln__cli_load_fail(path, EFBIG, buf, fd);
            unsigned char *grown = realloc(buf, cap * 2);
            if (!grown) return kiln__cli_load_fail(path, ENOMEM, buf, fd);
            buf = grown;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + size, cap - size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return kiln__cli_load_fail(path, errno, buf, fd);
        }
        if (n == 0) break;
        size += (size_t)n;
    }
    if (fd > STDIN_FILENO) close(fd);
    out->data = buf;
    out->size = size;
    return 1;
}

void kiln__cli_file_free(kiln__cli_file *f)
{
    free(f->data);
    f->data = NULL;
    f->size = 0;
}

/* ---- option parsing ------------------------------------------------------------------------ */

void kiln__cli_args_init(kiln__cli_args *a, const char *verb, int argc, char **argv,
                         const kiln__cli_opt *opts, size_t opt_count)
{
    memset(a, 0, sizeof *a);
    a->verb = verb;
    a->argc = argc;
    a->argv = argv;
    a->index = 1;
    a->opts = opts;
    a->opt_count = opt_count;
}

/* Takes the option's value from "=value" or from the next argument. `spelled` is the option
 * as typed, without any "=value" (spelled_len bytes). */
static int kiln__cli_take_value(kiln__cli_args *a, int k, const char *inline_value, const char *spelled,
                                int spelled_len)
{
    if (!a->opts[k].value_name) {
        if (inline_value) {
            kiln__cli_usage_error(a->verb, "option '%.*s' takes no value", spelled_len, spelled);
            return KILN_CLI_ARGS_ERROR;
        }
        return k;
    }
    if (inline_value) {
        a->value = inline_value;
        return k;
    }
    if (a->index >= a->argc) {
        kiln__cli_usage_error(a->verb, "option '%.*s' needs a value (%s)", spelled_len, spelled,
                              a->opts[k].value_name);
        return KILN_CLI_ARGS_ERROR;
    }
    a->value = a->argv[a->index++];
    return k;
}

int kiln__cli_args_next(kiln__cli_args *a)
{
    a->value = NULL;
    if (a->index >= a->argc) return KILN_CLI_ARGS_END;
    const char *arg = a->argv[a->index++];
    if (a->only_positional || arg[0] != '-' || arg[1] == 0) {
        a->value = arg;
        return KILN_CLI_ARGS_POSITIONAL;
    }
    if (arg[1] == '-') {
        if (arg[2] == 0) {
            a->only_positional = 1;
            return kiln__cli_args_next(a);
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        for (size_t k = 0; k < a->opt_count; k++) {
            const char *ln = a->opts[k].long_name;
            if (ln && strlen(ln) == len && memcmp(ln, name, len) == 0)
                return kiln__cli_take_value(a, (int)k, eq ? eq + 1 : NULL, arg, (int)(len + 2));
        }
        kiln__cli_usage_error(a->verb, "unknown option '%.*s'", (int)(len + 2), arg);
        return KILN_CLI_ARGS_ERROR;
    }
    if (arg[2] == 0) {
        for (size_t k = 0; k < a->opt_count; k++)
            if (a->opts[k].short_name && a->opts[k].short_name == arg[1])
                return kiln__cli_take_value(a, (int)k, NULL, arg, 2);
    }
    kiln__cli_usage_error(a->verb, "unknown option '%s'", arg);
    return KILN_CLI_ARGS_ERROR;
}

void kiln__cli_print_options(FILE *out, const kiln__cli_opt *opts, size_t opt_count)
{
    char spelled[64];
    for (size_t k = 0; k < opt_count; k++) {
        const kiln__cli_opt *o = &opts[k];
        int n = 0;
        if (o->short_name) n += snprintf(spelled + n, sizeof spelled - (size_t)n, "-%c%s", o->short_name, o->long_name ? ", " : "");
        else n += snprintf(spelled + n, sizeof spelled - (size_t)n, "    ");
        if (o->long_name && n >= 0 && (size_t)n < sizeof spelled)
            n += snprintf(spelled + n, sizeof spelled - (size_t)n, "--%s", o->long_name);
        if (o->value_name && n >= 0 && (size_t)n < sizeof spelled)
            snprintf(spelled + n, sizeof spelled - (size_t)n, " %s", o->value_name);
        fprintf(out, "  %-22s %s\n", spelled, o->help);
    }
}

int kiln__cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) return 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    }
    return 0;
}

/* ---- growable arrays ------------------------------------------------------------------------ */

int kiln__cli_reserve(void **ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 1;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2) return 0;
        n *= 2;
    }
    if (elem && n > SIZE_MAX / elem) return 0;
    void *p = realloc(*ptr, n * elem);
    if (!p) return 0;
    *ptr = p;
    *cap = n;
    return 1;
}

int kiln__cli_parse_metres(const char *text, float *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || !end || end == text || *end || !isfinite(v) || !(v > 0) || v > 1e6) return 0;
    *out = (float)v;
    return 1;
}
