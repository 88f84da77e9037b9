package testenv

import (
	"sync"

	"golang.org/x/sys/windows"
)

var underWine = sync.OnceValue(func() bool {
	// Wine's ntdll exports wine_get_version; Windows' never has. (An
	// environment variable could leak in from the Unix side or be missing.)
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
})

// UnderWine reports whether this Windows process runs under Wine, where
// tests meet Wine's gaps (internal/wintest lists them) rather than
// Windows'.
func UnderWine() bool { return underWine() }
