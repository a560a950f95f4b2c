/*
 * The host program, codemode_host.js, in the binary: the assembler includes the file itself
 * (the Makefile makes this object depend on it), so no generated copy can go stale.
 */
#include "codemode_host.h"

__asm__(".section .rodata\n"
	".global codemode_host_js\n"
	".type codemode_host_js, @object\n"
	"codemode_host_js:\n"
	".incbin \"server/agent/codemode/codemode_host.js\"\n"
	".byte 0\n"
	".size codemode_host_js, . - codemode_host_js\n"
	".previous\n");
