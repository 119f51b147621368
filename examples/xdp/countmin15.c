/* The Count-Min sketch of countmin.c with 15 rows. */
#define CM_ROWS 15
#include "countmin.c"
