#include <math.h>

#include "rest.h"

double kiln__rest_difference(const float a[10], const float b[10])
{
    double d = 0.0, pos = 0.0, neg = 0.0;
    for (unsigned c = 0; c < 10; c++) {
        if (c >= 3 && c < 7) {
            pos = fmax(pos, fabs((double)a[c] - b[c]));
            neg = fmax(neg, fabs((double)a[c] + b[c]));
        } else {
            d = fmax(d, fabs((double)a[c] - b[c]));
        }
    }
    return fmax(d, fmin(pos, neg));
}
