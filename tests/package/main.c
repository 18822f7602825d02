/* Links against an installed Kiln and prints one result string and the build info. With
 * KILN_CONSUMER_BAKER it also parses a (too short) Cast buffer through the baker library. */
#include <stdio.h>
#include <string.h>

#include "kiln/result.h"
#include "kiln/version.h"
#ifdef KILN_CONSUMER_BAKER
#include "kiln/bake/cast.h"
#endif

int main(void)
{
    const char *s = kiln_result_str(KILN_OK);
    printf("kiln_result_str(KILN_OK) = \"%s\"\n%s\n", s, kiln_build_info());
    if (strcmp(s, "ok") != 0) return 1;
#ifdef KILN_CONSUMER_BAKER
    kiln_cast_doc *doc = NULL;
    kiln_diag err;
    kiln_result r = kiln_cast_parse("cast", 4, NULL, &doc, &err);
    printf("kiln_cast_parse(4 bytes) = %s\n", kiln_result_name(r));
    if (r != KILN_ERR_CAST_TRUNCATED_HEADER || doc != NULL) return 1;
#endif
    return 0;
}
