/* Private: what the `kiln` command-line verbs share.
 *
 * The CLI is one dispatcher (main.c) plus one file per verb (inspect.c, cli_bake.c,
 * cli_verify.c, ...). A verb is a kiln__cli_verb: its name, a one-line summary for
 * `kiln --help`, the entry point and a help printer. Adding a verb means writing its file,
 * declaring its descriptor below and listing it in main.c's table; nothing else changes.
 *
 * Exit status is part of the interface (scripts test it), so every verb returns one of
 * KILN_EXIT_*; the numbers follow gltfpack's convention of separating usage, input and output
 * failures.
 */
#ifndef KILN_BAKER_CLI_H
#define KILN_BAKER_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kiln/result.h"

enum {
    KILN_EXIT_OK = 0,     /* success (warnings may have been printed) */
    KILN_EXIT_USAGE = 1,  /* bad command line: unknown verb or option, missing argument */
    KILN_EXIT_INPUT = 2,  /* input unreadable, malformed, or data dropped while reading it */
    KILN_EXIT_OUTPUT = 4  /* output could not be written (disk full, closed pipe, ...) */
};

/* The program name used in messages ("kiln"). */
#define KILN_CLI_NAME "kiln"

typedef struct kiln__cli_verb {
    const char *name;     /* as typed: "inspect" */
    const char *summary;  /* one line, no trailing period, for the verb list */
    /* argv[0] is the verb name, argv[1..argc) its arguments. Returns a KILN_EXIT_* value.
     * `--help` has already been handled by the dispatcher. */
    int (*run)(int argc, char **argv);
    /* Full usage text: synopsis, options, exit status specifics. */
    void (*help)(FILE *out);
} kiln__cli_verb;

/* Verb descriptors, one per verb file. */
extern const kiln__cli_verb kiln__cli_verb_inspect; /* inspect.c (+ inspect_*.c) */
extern const kiln__cli_verb kiln__cli_verb_bake;    /* cli_bake.c */
extern const kiln__cli_verb kiln__cli_verb_verify;  /* cli_verify.c */
extern const kiln__cli_verb kiln__cli_verb_pose;    /* cli_pose.c */
extern const kiln__cli_verb kiln__cli_verb_convert; /* cli_convert.c */
extern const kiln__cli_verb kiln__cli_verb_view;    /* cli_view.c (+ cli_view_*.c) */
extern const kiln__cli_verb kiln__cli_verb_plot;    /* cli_plot.c (+ cli_plot_*.c) */

/* ---- messages ------------------------------------------------------------------------------ */

/* "kiln: <verb>: <message>\n" on stderr (verb may be NULL), then, for usage errors, the hint
 * "Try 'kiln [<verb> ]--help'.". Returns KILN_EXIT_USAGE so callers can `return` it. */
int kiln__cli_usage_error(const char *verb, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints one diagnostic as `file: severity: node-path: message (byte offset N)`; the node path
 * and offset parts are left out when unknown. `file` may be NULL. */
void kiln__cli_print_diag(FILE *out, const char *file, const kiln_diag *d);

/* A bake diagnostic carries "input:node" in its path: when it belongs to input `file`, prints it
 * as kiln__cli_print_diag with that file first and returns 1; else prints nothing, returns 0. */
int kiln__cli_print_input_diag(FILE *out, const char *file, const kiln_diag *d);

/* Prints a diagnostic of the runtime's blob loader (kiln_blob_load, kiln_blob_open_file) as
 * `file: severity: message`. The loader's messages are complete on their own (a game prints
 * err.message alone): they already start with the check's path and end with its byte offset,
 * so printing those again, as kiln__cli_print_diag does, would say them twice. `file` is left
 * out when the message already starts with it (kiln_blob_open_file's I/O failures). */
void kiln__cli_print_blob_diag(FILE *out, const char *file, const kiln_diag *d);

/* Writes what a failed runtime call returned: kiln_result_str(r), followed by the runtime's
 * record of the rejected argument, " (kiln_sample: desc->out_count: out_count 2 is below ...)",
 * when kiln_error_detail() holds one for this result on this thread. */
void kiln__cli_put_result(FILE *out, kiln_result r);

/* "error", "warning", "info". */
const char *kiln__cli_severity_name(kiln_severity s);

/* Writes `s` for a terminal: control characters and DEL become '?', so that names taken from a
 * file cannot move the cursor or change colours. NULL prints `fallback`. */
void kiln__cli_put_text(FILE *out, const char *s, const char *fallback);

/* Flushes stdout and reports a write failure on stderr. Returns `status` when everything was
 * written, KILN_EXIT_OUTPUT otherwise (an incomplete output outranks every other outcome). */
int kiln__cli_finish_stdout(int status);

/* ---- files --------------------------------------------------------------------------------- */

typedef struct kiln__cli_file {
    unsigned char *data;  /* malloc'd, size bytes (never NULL after a successful load) */
    size_t         size;
} kiln__cli_file;

/* Reads the whole file at `path` ("-" is standard input) into memory. Regular files take one
 * allocation of their size, then read() until done; pipes grow the buffer. On failure prints
 * "kiln: cannot read 'path': <strerror>" on stderr and returns 0. */
int kiln__cli_file_load(const char *path, kiln__cli_file *out);
void kiln__cli_file_free(kiln__cli_file *f);

/* ---- option parsing -------------------------------------------------------------------------
 * A small getopt_long: long options `--name`, `--name=value`, `--name value`, short options
 * `-x` and `-x value`, and `--` to end the options. Anything else that starts with '-' (except
 * "-" alone, which names standard input) is an unknown option.
 *
 *   kiln__cli_args a;
 *   kiln__cli_args_init(&a, "inspect", argc, argv, opts, opt_count);
 *   for (int k; (k = kiln__cli_args_next(&a)) != KILN_CLI_ARGS_END;) {
 *       if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;   (message already printed)
 *       if (k == KILN_CLI_ARGS_POSITIONAL) { use a.value; continue; }
 *       switch (opts[k].key) { ... a.value for options that take one ... }
 *   }
 */
typedef struct kiln__cli_opt {
    const char *long_name;   /* without the dashes: "json"; NULL if none */
    char        short_name;  /* 'q'; 0 if none */
    const char *value_name;  /* "FILE" when the option takes a value, NULL for a flag */
    int         key;         /* returned to the caller's switch */
    const char *help;        /* one line for the options list */
} kiln__cli_opt;

enum { KILN_CLI_ARGS_END = -1, KILN_CLI_ARGS_ERROR = -2, KILN_CLI_ARGS_POSITIONAL = -3 };

typedef struct kiln__cli_args {
    const char          *verb;
    int                  argc;
    char               **argv;
    int                  index;       /* next argv element to look at */
    int                  only_positional; /* after "--" */
    const kiln__cli_opt *opts;
    size_t               opt_count;
    const char          *value;       /* value of the option or the positional argument */
} kiln__cli_args;

/* argv[0] is skipped (it is the verb). */
void kiln__cli_args_init(kiln__cli_args *a, const char *verb, int argc, char **argv,
                         const kiln__cli_opt *opts, size_t opt_count);
/* Returns the index into opts of the next option, KILN_CLI_ARGS_POSITIONAL, KILN_CLI_ARGS_END,
 * or KILN_CLI_ARGS_ERROR after printing a usage error. */
int kiln__cli_args_next(kiln__cli_args *a);

/* Prints the options table, aligned: "  -q, --quiet        help". */
void kiln__cli_print_options(FILE *out, const kiln__cli_opt *opts, size_t opt_count);

/* True when argv[1..argc) holds "--help" or "-h" before any "--". */
int kiln__cli_wants_help(int argc, char **argv);

/* A length in metres for --anim-error and --anim-distance: finite, > 0, at most 1e6. Returns 0
 * (leaving *out) when `text` is not one. */
int kiln__cli_parse_metres(const char *text, float *out);

/* ---- growable arrays ------------------------------------------------------------------------ */

/* Makes room for `need` elements of `elem` bytes in *ptr (capacity in *cap, doubled as needed).
 * Returns 0 when out of memory, leaving *ptr valid. */
int kiln__cli_reserve(void **ptr, size_t *cap, size_t need, size_t elem);

#endif
