#include "textflag.h"

// func ticks() uint64
TEXT ·ticks(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func prefetchw(p *byte)
TEXT ·prefetchw(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	BYTE $0x0F; BYTE $0x0D; BYTE $0x08 // PREFETCHW (AX)
	RET

// func cpuid(leaf uint32) (eax, ecx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-16
	MOVL leaf+0(FP), AX
	XORL CX, CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL CX, ecx+12(FP)
	RET
