//go:build amd64 && !race

#include "textflag.h"

// func storeRelease(p *atomic.Uint64, v uint64)
// The value of an atomic.Uint64 is its first and only word.
TEXT ·storeRelease(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, 0(AX)
	RET
