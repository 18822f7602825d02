/* Private: comparing two rest transforms, as the bake and the Cast export both report it. */
#ifndef KILN_BAKER_REST_H
#define KILN_BAKER_REST_H

/* Largest component difference between two rests given as 10 components (t, r x y z w, s);
 * rotations compare as q and -q (one rotation). */
double kiln__rest_difference(const float a[10], const float b[10]);

#endif
