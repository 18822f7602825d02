#include "kiln/result.h"
#include "kiln/version.h"

static const char *const kiln__result_desc[] = {
#define KILN_RESULT_DESC_(name, desc) desc,
    KILN_RESULTS(KILN_RESULT_DESC_)
#undef KILN_RESULT_DESC_
};

static const char *const kiln__result_names[] = {
#define KILN_RESULT_NAME_(name, desc) #name,
    KILN_RESULTS(KILN_RESULT_NAME_)
#undef KILN_RESULT_NAME_
};

const char *kiln_result_str(kiln_result r)
{
    if ((unsigned)r >= (unsigned)KILN_RESULT_COUNT_) return "unknown result";
    return kiln__result_desc[r];
}

const char *kiln_result_name(kiln_result r)
{
    if ((unsigned)r >= (unsigned)KILN_RESULT_COUNT_) return "UNKNOWN";
    return kiln__result_names[r];
}
