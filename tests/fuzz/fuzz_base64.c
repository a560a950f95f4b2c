/*
 * libFuzzer target for base64 (protocol/base64.c), both decoders: the file is included here so
 * the target can switch between the AVX2 loop and the scalar one (b64_avx2, which the daemon
 * sets once from the CPU and APP_SERVER_NO_AVX2). For each input:
 *   - decode it with the scalar path and, when the CPU has AVX2, with the vector path: the
 *     result, the decoded bytes and the error message must be the same;
 *   - encode it, decode the encoding with each path: the bytes must come back exactly.
 * Any difference aborts (a finding).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/base64.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode with one path (avx2 = 0 scalar, 1 vector); out holds base64_decoded_max(n). */
static int
fuzz_decode(int avx2, const char *in, size_t n, uint8_t *out, size_t *outlen, char **cause)
{
#if defined(__x86_64__)
	b64_avx2 = avx2;
#endif
	return base64_decode(in, n, out, outlen, cause);
}

static int
fuzz_have_avx2(void)
{
#if defined(__x86_64__)
	return __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max = base64_decoded_max(size), elen = base64_encoded_len(size), la = 0, lb = 0;
	uint8_t *a = malloc(max + 1), *b = malloc(max + 1);
	char *enc = malloc(elen + 1), *ca = NULL, *cb = NULL;
	int ra, rb, paths = fuzz_have_avx2() ? 2 : 1;

	if (a == NULL || b == NULL || enc == NULL)
		abort();
	ra = fuzz_decode(0, (const char *)data, size, a, &la, &ca);
	if ((ra == 0) != (ca == NULL) || la > max)
		abort();
	if (paths == 2) {
		rb = fuzz_decode(1, (const char *)data, size, b, &lb, &cb);
		if (ra != rb || la != lb || memcmp(a, b, la) != 0 || (ca != NULL) != (cb != NULL) ||
			(ca != NULL && strcmp(ca, cb) != 0))
			abort();
	}
	base64_encode(data, size, enc);
	for (int p = 0; p < paths; p++) {
		size_t n = 0;
		char *c = NULL;
		uint8_t *back = malloc(base64_decoded_max(elen) + 1);

		if (back == NULL)
			abort();
		if (fuzz_decode(p, enc, elen, back, &n, &c) != 0 || n != size ||
			memcmp(back, data, size) != 0)
			abort();
		free(back);
	}
	free(ca);
	free(cb);
	free(a);
	free(b);
	free(enc);
	return 0;
}
