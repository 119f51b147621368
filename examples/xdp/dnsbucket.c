/* The DNS cache of dnscache.c with buckets and records apart. */
#define DNS_BUCKET
#include "dnscache.c"
