/* The QUIC load balancer of quiclb.c for IPv6. */
#define QUICLB_IPV6
#include "quiclb.c"
