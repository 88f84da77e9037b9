package hook

import "github.com/mcp-heal/mcp-heal/internal/health"

// The failure vocabulary lives in internal/health; these names keep the
// hook code short.
type (
	Class = health.Class
	Match = health.Match
)

const (
	ConnClosed         = health.ConnClosed
	ClosedBeforeRun    = health.ClosedBeforeRun
	ClosedBeforeAnswer = health.ClosedBeforeAnswer
	NotConnected       = health.NotConnected
	Disconnected       = health.Disconnected
	IdleTimeout        = health.IdleTimeout
	RequestTimeout     = health.RequestTimeout
	StillConnecting    = health.StillConnecting
	ShimRestarted      = health.ShimRestarted
	ShimFailed         = health.ShimFailed
	CannotStart        = health.CannotStart
	OK                 = health.OK

	ActSighup     = health.ActSighup
	ActKilledHung = health.ActKilledHung
	ActProbedOK   = health.ActProbedOK
	ActProbedFail = health.ActProbedFail
	ActNone       = health.ActNone
)

// Classify reports whether text is a disconnect, and which (health.Classify).
func Classify(text string) (Match, bool) { return health.Classify(text) }
