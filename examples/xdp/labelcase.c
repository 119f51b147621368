/* labels.c over five bytes with dns_qname.c's case folding: a label's
 * bytes are folded to lower case before they are hashed, so that paths
 * which differ only in the case of a byte share every refutation about
 * the label lengths (tests of the search's families, bound/prune_test.go). */
#define MAX_NAME 5
#define FOLD_CASE
#include "labels.c"
