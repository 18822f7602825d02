/* `kiln verify`: load a blob with full verification and say whether the runtime accepts it. */
#define _POSIX_C_SOURCE 200809L

#include <string.h>

#include "cli.h"
#include "kiln/blob.h"

enum { OPT_NO_CRC, OPT_HELP };

static const kiln__cli_opt kiln__verify_opts[] = {
    {"no-crc", 0, NULL, OPT_NO_CRC, "skip the checksum (structure, indices and values are still checked)"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};
#define KILN__VERIFY_OPT_COUNT (sizeof kiln__verify_opts / sizeof kiln__verify_opts[0])

static void kiln__verify_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " verify [options] FILE.kiln\n"
          "\n"
          "Loads a blob the way the runtime does (kiln_blob_load with full verification: header,\n"
          "CRC-32C, section table, every record's indices and ranges, finite floats) and prints\n"
          "'FILE: OK' with a one-line summary, or the first check that fails.\n"
          "\n"
          "Options:\n",
          out);
    kiln__cli_print_options(out, kiln__verify_opts, KILN__VERIFY_OPT_COUNT);
    fputs("\n"
          "Exit status:\n"
          "  0  the blob verifies\n"
          "  1  usage error\n"
          "  2  the file cannot be read or does not verify\n"
          "  4  the output could not be written\n",
          out);
}

static int kiln__verify_run(int argc, char **argv)
{
    const char *path = NULL;
    uint32_t flags = 0;
    kiln__cli_args a;
    kiln__cli_args_init(&a, "verify", argc, argv, kiln__verify_opts, KILN__VERIFY_OPT_COUNT);
    for (int k; (k = kiln__cli_args_next(&a)) != KILN_CLI_ARGS_END;) {
        if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;
        if (k == KILN_CLI_ARGS_POSITIONAL) {
            if (path) return kiln__cli_usage_error("verify", "one blob expected, got '%s' and '%s'", path, a.value);
            path = a.value;
            continue;
        }
        if (kiln__verify_opts[k].key == OPT_NO_CRC) flags |= KILN_BLOB_LOAD_NO_CRC;
    }
    if (!path) return kiln__cli_usage_error("verify", "missing blob file");

    kiln_blob_file f;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    if (kiln_blob_open_file(path, flags, NULL, &f, &err) != KILN_OK) {
        kiln__cli_print_blob_diag(stderr, path, &err);
        return KILN_EXIT_INPUT;
    }
    const kiln_blob_header *h = kiln_blob_header_of(f.blob);
    uint32_t sections = 0, models = 0, meshes = 0, bones = 0, materials = 0, instances = 0, references = 0;
    kiln_blob_sections(f.blob, &sections);
    kiln_blob_models(f.blob, &models);
    kiln_blob_meshes(f.blob, &meshes);
    kiln_blob_bones(f.blob, &bones);
    kiln_blob_materials(f.blob, &materials);
    kiln_blob_instances(f.blob, &instances);
    kiln_blob_references(f.blob, &references);
    kiln__cli_put_text(stdout, path, "");
    printf(": OK: kiln blob %u.%u, %llu bytes, %u sections%s, crc32c %08x%s; %u models, %u meshes, %u bones, "
           "%u materials, %u instances of %u references\n",
           h->version_major, h->version_minor, (unsigned long long)h->total_size, sections,
           (h->flags & KILN_BLOB_FLAG_QUANTIZED) ? " (quantized)" : "", h->crc32c,
           (flags & KILN_BLOB_LOAD_NO_CRC) ? " (not checked)" : "", models, meshes, bones, materials, instances,
           references);
    kiln_blob_close_file(&f);
    return KILN_EXIT_OK;
}

const kiln__cli_verb kiln__cli_verb_verify = {
    "verify",
    "check that a blob loads: header, checksum, sections, indices, values",
    kiln__verify_run,
    kiln__verify_help,
};
