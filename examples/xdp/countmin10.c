/* The Count-Min sketch of countmin.c with 10 rows. */
#define CM_ROWS 10
#include "countmin.c"
