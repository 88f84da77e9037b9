//go:build !linux && !darwin

package cfgfile

// exchangeFiles is not available: Commit falls back to a checked rename.
func exchangeFiles(a, b string) error { return errNoExchange }
