/* flowcount with a limit on new flows per source address: every new flow
 * also looks up (and inserts or bumps) its source in a second hash map, and
 * a source past the limit has its new flows dropped. See flowcount.c. */
#define FLOWCOUNT_V2
#include "flowcount.c"
