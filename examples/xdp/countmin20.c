/* The Count-Min sketch of countmin.c with 20 rows. */
#define CM_ROWS 20
#include "countmin.c"
