/*
 * bcryptprimitives.dll for Wine 8.0, for the Windows test run only.
 *
 * Why: since Go 1.22 the Windows runtime reads its random bytes through
 * ProcessPrng, exported by bcryptprimitives.dll (Windows 10 and later).
 * Debian 12's Wine 8.0 has no such DLL, so every Go .exe dies at start
 * ("bcryptprimitives.dll not found") before a single test runs. This stub
 * exports ProcessPrng and forwards it to SystemFunction036 (advapi32's
 * RtlGenRandom), which Wine has. Real Windows never loads this file: the
 * test runner (internal/wintest) builds it with Debian's MinGW and copies
 * it into its own WINEPREFIX's drive_c/windows/system32.
 *
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -s -o bcryptprimitives.dll processprng.c -ladvapi32
 */
#include <windows.h>

/* RtlGenRandom: documented in ntsecapi.h under this export name. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/*
 * Same signature as the real export; the runtime always reports success
 * and so does Windows. SystemFunction036 takes a ULONG, so larger requests
 * go in chunks.
 */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
