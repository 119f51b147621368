/* The RTP transcoder of rtp_transcode.c with a table lookup per byte. */
#define RTP_TABLE
#include "rtp_transcode.c"
