/* The Dask path's payloads (docs/protocol.md, "The Dask path"): hostile
 * base64 is refused or decoded, never a crash; what is decoded encodes
 * back to the very text (strict: one text per datagram), and fits. */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/dask_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char out[65508];
	static unsigned char back[65508 / 3 * 4 + 8];
	if (size > sizeof(back) - 8)
		return 0;
	long n = dask_base64_decode((const char *)data, size, out, sizeof(out));
	if (n < 0)
		return 0;
	if ((size_t)n > sizeof(out))
		abort();
	int m = EVP_EncodeBlock(back, out, (int)n);
	if (m < 0 || (size_t)m != size || memcmp(back, data, size) != 0)
		abort();
	return 0;
}
